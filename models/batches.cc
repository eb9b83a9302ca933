#include "models/batches.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

// [rows, sample...]: a batch of samples of `sample` shape.
TensorShape BatchShape(int64_t rows, const TensorShape& sample) {
  std::vector<int64_t> dims = {rows};
  for (int i = 0; i < sample.dims(); ++i) dims.push_back(sample[i]);
  return TensorShape(dims);
}

absl::StatusOr<int64_t> CheckX(const ModelState& m, const Tensor& x,
                               const std::string& where) {
  return CheckInput(m, 0, x, where, "x");
}

absl::StatusOr<int64_t> CheckInput(const ModelState& m, size_t input,
                                   const Tensor& x, const std::string& where,
                                   const std::string& what) {
  const TensorShape& shape = m.input_shapes[input];
  if (x.dtype() != DT_FLOAT) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": ", what, " must be float, got ", DataTypeString(x.dtype())));
  }
  bool fits = x.shape().dims() == shape.dims() + 1;
  for (int i = 0; fits && i < shape.dims(); ++i) {
    fits = x.shape()[i + 1] == shape[i];
  }
  if (!fits) {
    std::string takes = "[samples";
    for (int i = 0; i < shape.dims(); ++i) {
      absl::StrAppend(&takes, ", ", shape[i]);
    }
    takes += "]";
    if (shape.dims() == 1) {
      absl::StrAppend(&takes, " (", m.in_dims[input], " features)");
    }
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", what, " has shape ", x.shape().DebugString(),
                     " but model '", m.scope.name(), "' takes ", takes));
  }
  return x.shape()[0];
}

namespace {

// `y`'s integer values as float32 (exact up to 2^24, as Keras's cast).
template <typename T>
absl::StatusOr<Tensor> AsFloat(const Tensor& y) {
  GG_ASSIGN_OR_RETURN(Tensor out, Tensor::Uninitialized(DT_FLOAT, y.shape()));
  absl::Span<const T> in = y.data<T>();
  absl::Span<float> values = out.mutable_data<float>();
  for (size_t i = 0; i < in.size(); ++i) values[i] = static_cast<float>(in[i]);
  return out;
}

}  // namespace

absl::Status CheckLabels(const Loss& loss, int64_t units, Tensor& y,
                         int64_t samples, const std::string& where) {
  if (y.shape().dims() == 0 || y.shape()[0] != samples) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": x has ", samples, " samples but y has ",
                     y.shape().dims() == 0 ? std::string("a scalar")
                                           : absl::StrCat(y.shape()[0]),
                     " (shape ", y.shape().DebugString(), ")"));
  }
  if (LabelsOf(loss) == LabelKind::kSparse) {
    const bool column = y.shape().dims() == 2 && y.shape()[1] == 1;
    // Keras takes class ids as integers or as floats holding integers.
    if ((y.dtype() != DT_INT32 && y.dtype() != DT_INT64 &&
         y.dtype() != DT_FLOAT) ||
        (y.shape().dims() != 1 && !column)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": ", loss.name(),
          " takes integer class labels of shape [samples], got ",
          DataTypeString(y.dtype()), " ", y.shape().DebugString()));
    }
    for (int64_t i = 0; i < samples; ++i) {
      if (y.dtype() == DT_FLOAT) {
        const float f = y.data<float>()[i];
        // Written so that NaN fails too.
        if (!(f == std::floor(f) && f >= 0.f &&
              f < static_cast<float>(units))) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ": float label ", f, " of sample ", i,
              " is not a class id (an integral value in [0, ", units, "))"));
        }
        continue;
      }
      const int64_t label =
          y.dtype() == DT_INT32 ? y.data<int32_t>()[i] : y.data<int64_t>()[i];
      if (label < 0 || label >= units) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": label ", label, " of sample ", i,
                         " is outside [0, ", units, ")"));
      }
    }
    return absl::OkStatus();
  }
  const bool flat_ok = y.shape().dims() == 1 && units == 1;
  if (y.dtype() == DT_INT32) {
    GG_ASSIGN_OR_RETURN(y, AsFloat<int32_t>(y));
  } else if (y.dtype() == DT_INT64) {
    GG_ASSIGN_OR_RETURN(y, AsFloat<int64_t>(y));
  }
  if (y.dtype() != DT_FLOAT ||
      !(flat_ok || (y.shape().dims() == 2 && y.shape()[1] == units))) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": ", loss.name(), " takes float targets of shape [", samples,
        ", ", units, "], got ", DataTypeString(y.dtype()), " ",
        y.shape().DebugString()));
  }
  return absl::OkStatus();
}

// Samples `rows` of x (float [n, sample...], `cols` values per sample) as a
// new [rows.size(), sample...] tensor.
absl::StatusOr<Tensor> GatherRows(const Tensor& x, const TensorShape& sample,
                                  int64_t cols,
                                  absl::Span<const int64_t> rows) {
  // Every element is written below.
  GG_ASSIGN_OR_RETURN(
      Tensor out,
      Tensor::Uninitialized(
          DT_FLOAT, BatchShape(static_cast<int64_t>(rows.size()), sample)));
  const float* src = x.data<float>().data();
  float* dst = out.mutable_data<float>().data();
  // The rows are scattered (shuffled) and x rarely stays in L1 between
  // steps: ask for every row's first line up front so the misses overlap.
  for (int64_t r : rows) __builtin_prefetch(src + r * cols);
  // Packet copies rather than a memcpy call per row: rows are short (tens
  // of features), and this runs every step. A row's last packet ends at
  // its end, overlapping the one before when cols is not a multiple of the
  // packet size; rows shorter than a packet are copied element by element.
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<float>::type;
  constexpr int64_t kPacket = ei::packet_traits<float>::size;
  for (size_t i = 0; i < rows.size(); ++i) {
    const float* row = src + rows[i] * cols;
    float* to = dst + i * cols;
    if (cols < kPacket) {
      for (int64_t j = 0; j < cols; ++j) to[j] = row[j];
      continue;
    }
    for (int64_t j = 0; j < cols - kPacket; j += kPacket) {
      ei::pstoreu(to + j, ei::ploadu<Packet>(row + j));
    }
    ei::pstoreu(to + cols - kPacket, ei::ploadu<Packet>(row + cols - kPacket));
  }
  return out;
}

// The labels of `rows` as the loss's placeholder takes them.
absl::StatusOr<Tensor> GatherLabels(const ModelState& m, LabelKind kind,
                                    const Tensor& y,
                                    absl::Span<const int64_t> rows) {
  return GatherLabels(kind, m.units, y, rows);
}

absl::StatusOr<Tensor> GatherLabels(LabelKind kind, int64_t units,
                                    const Tensor& y,
                                    absl::Span<const int64_t> rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  if (kind == LabelKind::kSparse) {
    GG_ASSIGN_OR_RETURN(Tensor out, Tensor::Uninitialized(DT_INT32, {n}));
    auto dst = out.mutable_data<int32_t>();
    for (int64_t i = 0; i < n; ++i) {
      // CheckLabels made sure each is an id in [0, units).
      if (y.dtype() == DT_INT32) {
        dst[i] = y.data<int32_t>()[rows[i]];
      } else if (y.dtype() == DT_INT64) {
        dst[i] = static_cast<int32_t>(y.data<int64_t>()[rows[i]]);
      } else {
        dst[i] = static_cast<int32_t>(y.data<float>()[rows[i]]);
      }
    }
    return out;
  }
  return GatherRows(y, {units}, units, rows);
}

}  // namespace models_internal
}  // namespace graphgc
