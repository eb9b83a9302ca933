// models/training.h
//
// The builders behind Sequential::Compile, private to models/: the loss
// and the metrics (the optimizer's update nodes: optimizer_registry.h), and
// the tensor size checks the builders share. Each builds into the model's
// scope and returns Outputs; on error what it built is unreferenced (the
// caller drops it, and the next collection sweeps it).
#ifndef GRAPHGC_MODELS_TRAINING_H_
#define GRAPHGC_MODELS_TRAINING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/losses.h"
#include "runtime/graph.h"
#include "runtime/session.h"

namespace graphgc {
namespace models_internal {

// What the loss reads: the model's output and, when the last layer is a
// softmax, its logits; `labels`, when given, is the labels placeholder to
// use (a second loss over the same labels), else BuildLoss makes one.
struct LossInputs {
  Output output;
  std::optional<Output> softmax_logits;
  int64_t units = 0;
  std::optional<Output> labels;
};

struct LossNodes {
  Output labels;  // placeholder: int32 [batch] or float [batch, units]
  Output loss;    // scalar, mean over the batch
  std::optional<Output> accuracy;  // scalar, when asked for
};

absl::StatusOr<LossNodes> BuildLoss(const Loss& loss, const LossInputs& in,
                                    const std::string& scope,
                                    bool with_accuracy);

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

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_TRAINING_H_
