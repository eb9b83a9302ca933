// models/optimizer_state.h
//
// A compiled model's optimizer state in model.weights.h5, as Keras 3 keeps
// it (keras/src/optimizers/base_optimizer.py save_own_variables and
// load_own_variables; saving_lib puts them beside "layers"):
//
//   /optimizer/vars/0   int64 scalar: iterations
//   /optimizer/vars/1   float32 scalar: the learning rate (absent when a
//                       schedule gives it)
//   /optimizer/vars/2.. the slots in the order the optimizer's build adds
//                       them (Adam: m and v of each weight interleaved,
//                       then amsgrad's v_hat of each weight), then scalars
//                       it tracks after them (Nadam's u_product)
//
// (models/optimizer_registry.h OptimizerStateLayout). Save writes them for
// a compiled model; LoadModel, LoadFunctional and LoadAnyModel with compile
// restore them once the model is compiled from the saved compile config.
// Private to models/.
#ifndef GRAPHGC_MODELS_OPTIMIZER_STATE_H_
#define GRAPHGC_MODELS_OPTIMIZER_STATE_H_

#include <string>

#include "absl/status/statusor.h"
#include "models/sequential.h"

namespace graphgc {
namespace models_internal {

// The weights file's group of the optimizer's variables.
inline constexpr char kOptimizerGroup[] = "optimizer";

// Sets the compiled `model`'s optimizer variables (reached through a
// Sequential handle on either kind) from the "optimizer/vars" datasets of
// the weights file image `h5` (named `file`), all or none, after checking
// each one's dtype and shape, and the step powers (Adam's beta^t) from the
// restored iteration count. A file whose optimizer group is absent, or
// holds another count of variables, other dtypes or shapes, or a negative
// iteration count, leaves the fresh optimizer as it is: true when the state
// was restored, false when skipped (Keras warns and skips a count
// mismatch). Other errors (DataLoss for a corrupt dataset) are returned.
absl::StatusOr<bool> RestoreOptimizerState(Sequential& model,
                                           const std::string& h5,
                                           const std::string& file);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_OPTIMIZER_STATE_H_
