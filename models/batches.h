// models/batches.h
//
// The data side of the training engine (models/engine.h): checking x and y
// against a model, and gathering a batch of their rows as the model's input
// and label placeholders take them. Private to models/.
#ifndef GRAPHGC_MODELS_BATCHES_H_
#define GRAPHGC_MODELS_BATCHES_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "models/model_state.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

// [rows, sample...]: a batch of samples of `sample` shape.
TensorShape BatchShape(int64_t rows, const TensorShape& sample);

// The number of samples of x, or InvalidArgument naming `where` when x is
// not float [samples, <the model's input shape>].
absl::StatusOr<int64_t> CheckX(const ModelState& m, const Tensor& x,
                               const std::string& where);

// The number of samples of input `input`'s data x, or InvalidArgument
// naming `where` and `what` ("x", "input 'title'") when x is not float
// [samples, <that input's shape>].
absl::StatusOr<int64_t> CheckInput(const ModelState& m, size_t input,
                                   const Tensor& x, const std::string& where,
                                   const std::string& what);

// Checks one output's y against `samples`, its `loss` and `units`: class
// ids in [0, units) (integers, or floats holding integers) for a sparse
// loss, [samples, units] targets otherwise. Integer targets of a dense loss
// become float32 in `y`, as Keras casts y_true to the prediction's dtype.
absl::Status CheckLabels(const Loss& loss, int64_t units, Tensor& y,
                         int64_t samples, const std::string& where);

// Samples `rows` of x (float [n, sample...], `cols` values per sample) as a
// new [rows.size(), sample...] tensor.
absl::StatusOr<Tensor> GatherRows(const Tensor& x, const TensorShape& sample,
                                  int64_t cols, absl::Span<const int64_t> rows);

// The labels of `rows` as the loss's placeholder takes them.
absl::StatusOr<Tensor> GatherLabels(const ModelState& m, LabelKind kind,
                                    const Tensor& y,
                                    absl::Span<const int64_t> rows);
absl::StatusOr<Tensor> GatherLabels(LabelKind kind, int64_t units,
                                    const Tensor& y,
                                    absl::Span<const int64_t> rows);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_BATCHES_H_
