#include "models/sample_weights.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

absl::Status CheckSampleWeight(const Tensor& w, int64_t samples,
                               const std::string& where) {
  const TensorShape& s = w.shape();
  const bool shape_ok =
      (s.dims() == 1 || (s.dims() == 2 && s[1] == 1)) && s[0] == samples;
  if (w.dtype() != DT_FLOAT || !shape_ok) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": sample_weight must be float of shape [", samples,
                     "] (one weight per sample), got ",
                     DataTypeString(w.dtype()), " ", s.DebugString()));
  }
  return absl::OkStatus();
}

namespace {

// The class id of sample `i` of y as Keras reads it for class_weight.
int64_t ClassOf(const Tensor& y, int64_t i) {
  const TensorShape& s = y.shape();
  const int64_t cols = s.dims() > 1 ? s[s.dims() - 1] : 1;
  if (y.dtype() == DT_INT32) return y.data<int32_t>()[i * cols];
  if (y.dtype() == DT_INT64) return y.data<int64_t>()[i * cols];
  const float* row = y.data<float>().data() + i * cols;
  if (cols > 1) {  // argmax, the first of equal maxima
    int64_t best = 0;
    for (int64_t j = 1; j < cols; ++j) {
      if (row[j] > row[best]) best = j;
    }
    return best;
  }
  // np.round: half to even, the default rounding mode. Out of range
  // values match no class.
  const double r = std::nearbyint(static_cast<double>(row[0]));
  if (!(r >= -9.0e18 && r <= 9.0e18)) return INT64_MIN;
  return static_cast<int64_t>(r);
}

}  // namespace

absl::StatusOr<Tensor> ClassWeightsToSampleWeights(
    const Tensor& y, const std::map<int64_t, float>& class_weight,
    const std::string& where) {
  const int64_t n = y.shape().dims() == 0 ? 0 : y.shape()[0];
  if (y.dtype() != DT_FLOAT && y.dtype() != DT_INT32 && y.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": class_weight needs integer or float labels, got ",
        DataTypeString(y.dtype())));
  }
  GG_ASSIGN_OR_RETURN(Tensor out, Tensor::Uninitialized(DT_FLOAT, {n}));
  auto dst = out.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) {
    auto it = class_weight.find(ClassOf(y, i));
    dst[i] = it == class_weight.end() ? 1.f : it->second;
  }
  return out;
}

absl::StatusOr<Tensor> GatherWeights(const Tensor* w,
                                     absl::Span<const int64_t> rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  GG_ASSIGN_OR_RETURN(Tensor out, Tensor::Uninitialized(DT_FLOAT, {n}));
  auto dst = out.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = w == nullptr ? 1.f : w->data<float>()[rows[i]];
  }
  return out;
}

}  // namespace models_internal
}  // namespace graphgc
