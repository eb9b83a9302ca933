// models/training.h
//
// The builders behind Sequential::Compile, private to models/: the
// optimizer's update nodes (the loss and its metrics are built by
// models/loss_registry.h). Each builds into the model's
// scope and returns Outputs; on error what it built is unreferenced (the
// caller drops it, and the next collection sweeps it).
#ifndef GRAPHGC_MODELS_TRAINING_H_
#define GRAPHGC_MODELS_TRAINING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "runtime/graph.h"
#include "runtime/session.h"

namespace graphgc {
namespace models_internal {

// Refuses optimizer options that can only make NaN or infinite weights,
// naming the option and its value. Adam: learning_rate finite and >= 0,
// beta_1 and beta_2 in [0, 1), epsilon finite and > 0. SGD: learning_rate
// finite and >= 0, momentum in [0, 1].
absl::Status CheckOptimizer(const Optimizer& optimizer);

// Checks, before anything is allocated, that `copies` tensors of `dtype`
// and `shape` can be made for `what` (named in the status):
// InvalidArgument when the shape is invalid or its byte count overflows,
// ResourceExhausted when they need more bytes than MaxTensorBytes() (by
// default this machine's physical memory; runtime/tensor.h).
absl::Status CheckFits(DataType dtype, const TensorShape& shape, int64_t copies,
                       const std::string& what);

// A new tensor for `what` after CheckFits, zeroed when `zero` (otherwise
// its elements are unspecified and the caller writes every one); a failed
// allocation is ResourceExhausted.
absl::StatusOr<Tensor> NewTensor(DataType dtype, const TensorShape& shape,
                                 bool zero, const std::string& what);

// The learning rate as a graph variable (a float scalar): the update ops
// read `read` every step, so SetLearningRate assigns it (feeding
// `assign_value`, running `assign`) without building anything.
struct LearningRateNodes {
  Output variable;      // VarHandleOp "<scope>/<Optimizer>/learning_rate"
  Output read;          // ReadVariableOp the update ops take as their lr
  Output assign_value;  // float scalar Placeholder
  Output assign;        // AssignVariableOp (a run target)
};

struct UpdateNodes {
  Output train_op;  // NoOp standing for the whole step
  LearningRateNodes learning_rate;
};

// The optimizer's updates of `variables` (VarHandleOp outputs) from
// `grads`, run after `after` (the loss and metrics), and one NoOp that
// stands for the whole step (it also runs `extra_updates`, e.g. moving
// statistics). Initialises the optimizer's own variables (the learning
// rate included) with `session`.
absl::StatusOr<UpdateNodes> BuildUpdates(
    const Optimizer& optimizer, const std::vector<Output>& variables,
    const std::vector<TensorShape>& shapes, const std::vector<Output>& grads,
    const std::vector<NodeHandle>& after, const std::string& scope,
    Session& session, const std::vector<NodeHandle>& extra_updates = {});

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_TRAINING_H_
