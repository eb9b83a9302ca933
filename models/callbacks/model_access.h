// models/callbacks/model_access.h
//
// CallbackModel: what the stock callbacks use of the model they watch. The
// callbacks sit below Sequential (models/sequential.h includes
// models/callbacks.h), so they reach the model only through this interface,
// which Sequential provides: CallbackModelOf (defined in
// models/sequential_callback_access.cc) wraps the model a hook is given.
#ifndef GRAPHGC_MODELS_CALLBACKS_MODEL_ACCESS_H_
#define GRAPHGC_MODELS_CALLBACKS_MODEL_ACCESS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gc/handle.h"
#include "runtime/tensor.h"
#include "serialize/scope_renaming.h"

namespace graphgc {

class Sequential;

// The model during a fit, as Sequential's methods of the same names (see
// models/sequential.h and models/saving.h) behave. It refers to the model it
// was made for, which must outlive it, and keeps nothing of it alive.
class CallbackModel {
 public:
  virtual ~CallbackModel() = default;

  // Asks the running fit to stop (Keras's `model.stop_training = True`).
  virtual void StopTraining() = 0;
  virtual absl::StatusOr<float> learning_rate() const = 0;
  virtual absl::Status SetLearningRate(float learning_rate) = 0;
  virtual std::vector<Tensor> GetWeights() const = 0;
  virtual absl::Status SetWeights(const std::vector<Tensor>& weights) = 0;
  // The nodes that stand for the whole model (for the TensorBoard graph).
  virtual std::vector<NodeHandle> GraphRoots() const = 0;
  // The model's Keras JSON config, scope names renamed by `renaming`.
  virtual absl::StatusOr<std::string> KerasConfigJson(
      const ScopeRenaming& renaming) const = 0;
  // The whole model to the directory `dir`, or its weights alone to the
  // HDF5 file `path`.
  virtual absl::Status Save(const std::string& dir) const = 0;
  virtual absl::Status SaveWeights(const std::string& path) const = 0;
};

// `model` as a CallbackModel; valid while `model` is.
std::unique_ptr<CallbackModel> CallbackModelOf(const Sequential& model);

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_CALLBACKS_MODEL_ACCESS_H_
