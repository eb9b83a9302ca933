// models/training.h
//
// The builders behind Sequential::Compile, private to models/: the loss,
// the metrics and the optimizer's update nodes. Each builds into the model's
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

// What the loss reads: the model's output and, when the last layer is a
// softmax, its logits.
struct LossInputs {
  Output output;
  std::optional<Output> softmax_logits;
  int64_t units = 0;
};

struct LossNodes {
  Output labels;  // placeholder: int32 [batch] or float [batch, units]
  Output loss;    // scalar, mean over the batch
  std::optional<Output> accuracy;  // scalar, when asked for
};

absl::StatusOr<LossNodes> BuildLoss(const Loss& loss, const LossInputs& in,
                                    const std::string& scope,
                                    bool with_accuracy);

// The optimizer's updates of `variables` (VarHandleOp outputs) from
// `grads`, run after `after` (the loss and metrics), and one NoOp that
// stands for the whole step. Initialises the optimizer's own variables with
// `session`.
absl::StatusOr<Output> BuildUpdates(const Optimizer& optimizer,
                                    const std::vector<Output>& variables,
                                    const std::vector<TensorShape>& shapes,
                                    const std::vector<Output>& grads,
                                    const std::vector<NodeHandle>& after,
                                    const std::string& scope, Session& session);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_TRAINING_H_
