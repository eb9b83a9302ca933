// models/optimizer_base.h
//
// What Keras's base optimizer (keras/src/optimizers/base_optimizer.py) does
// around every optimizer's own update, for every kind alike: the checks and
// compile_config fields of the base options, gradient clipping, decoupled
// weight decay and the step count. BuildUpdates (optimizer_registry.cc)
// runs them in Keras's order: clip, decay, update, count. Private to
// models/.
#ifndef GRAPHGC_MODELS_OPTIMIZER_BASE_H_
#define GRAPHGC_MODELS_OPTIMIZER_BASE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/keras_json.h"
#include "models/optimizers.h"
#include "runtime/graph.h"

namespace graphgc {
namespace models_internal {

// Refuses more than one clipping option (Keras's message) and values that
// can only make NaN weights, naming the option and the optimizer.
absl::Status CheckBaseOptions(const std::string& class_name,
                              const BaseOptimizerOptions& base);

// Adds the options that are set to a Keras-serialised optimizer's "config"
// (unset ones are Keras's None and left out).
void WriteBaseConfig(const BaseOptimizerOptions& base, Json& object);

// The base options of a compile_config optimizer "config" (absent or null:
// unset).
absl::StatusOr<BaseOptimizerOptions> ReadBaseConfig(const ConfigObject& c);

// The gradients as Keras clips them: clipnorm scales each gradient to an L2
// norm of at most clipnorm, clipvalue clamps each element to [-clipvalue,
// clipvalue], global_clipnorm scales all by clipnorm / max(global norm,
// clipnorm). Unchanged when none is set. Nodes under "<s>/clip".
absl::StatusOr<std::vector<Output>> ClipGradients(
    const BaseOptimizerOptions& base, const std::vector<Output>& grads,
    const std::string& s);

// w -= w * weight_decay * lr for each variable, run after `after`: one
// AssignSubVariableOp per variable under "<base>/weight_decay".
absl::StatusOr<std::vector<NodeHandle>> WeightDecayUpdates(
    float weight_decay, const Output& lr, const std::vector<Output>& variables,
    const std::vector<NodeHandle>& after, const std::string& s);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_OPTIMIZER_BASE_H_
