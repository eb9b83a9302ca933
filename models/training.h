// models/training.h
//
// The tensor size checks the layers, the loss and optimizer builders
// (models/loss_registry.h, models/optimizer_registry.h) and the engine
// share: each checks that a tensor fits before it is allocated.
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
