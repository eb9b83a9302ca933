// models/orthogonal.h
//
// Keras 3's Orthogonal initializer (keras.initializers.Orthogonal, gain 1),
// the default recurrent_initializer of LSTM and GRU: the Q factor of the QR
// decomposition of a standard normal matrix, its columns' signs set by the
// signs of R's diagonal so the result is uniformly distributed, transposed
// when the shape is wider than tall.
//
// Thread safety: may be called from any thread.
#ifndef GRAPHGC_MODELS_ORTHOGONAL_H_
#define GRAPHGC_MODELS_ORTHOGONAL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

// An orthogonal tensor of `shape` (rank >= 2: rows are the product of all
// but the last dimension), drawn with `seed` (0: a fresh random seed). The
// caller checked the shape (CheckFits). `what` names the tensor in errors.
absl::StatusOr<Tensor> Orthogonal(const TensorShape& shape, uint64_t seed,
                                  const std::string& what);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_ORTHOGONAL_H_
