#include "models/training.h"

#include <unistd.h>

#include <cmath>
#include <variant>

#include "absl/strings/str_cat.h"
#include "models/losses.h"
#include "ops/ops.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

absl::Status CheckFits(DataType dtype, const TensorShape& shape, int64_t copies,
                       const std::string& what) {
  absl::Status valid = TensorShape::Validate(shape.dim_sizes(), false);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", valid.message()));
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(shape.num_elements(), DataTypeSize(dtype),
                             &bytes) ||
      __builtin_mul_overflow(bytes, copies, &bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", copies, " x ", DataTypeString(dtype), " ",
                     shape.DebugString(), " is too many bytes to count"));
  }
  const int64_t limit = MaxTensorBytes();
  if (limit > 0 && bytes > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": ", copies, " x ", DataTypeString(dtype), " ",
        shape.DebugString(), " needs ", bytes, " bytes, more than the ", limit,
        " a tensor may take (MaxTensorBytes: by default this "
        "machine's memory)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> NewTensor(DataType dtype, const TensorShape& shape,
                                 bool zero, const std::string& what) {
  GG_RETURN_IF_ERROR(CheckFits(dtype, shape, 1, what));
  absl::StatusOr<Tensor> t =
      zero ? Tensor::Zeros(dtype, shape) : Tensor::Uninitialized(dtype, shape);
  if (!t.ok()) {
    return Annotate(t.status(), what);
  }
  return t;
}

}  // namespace models_internal
}  // namespace graphgc
