// Kernels of Sum and Mean, and the reduction-axes rule their shape
// functions and gradients share (ops/math_kernels.h).
#include <algorithm>
#include <type_traits>
#include <utility>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/math_kernels.h"
#include "ops/op_util.h"
#include "util/status_macros.h"

namespace graphgc {
namespace math_kernels {

absl::StatusOr<std::vector<bool>> ReducedAxes(absl::Span<const int64_t> axes,
                                              int rank) {
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    GG_ASSIGN_OR_RETURN(int d, op_util::NormaliseAxis(a, rank));
    if (reduced[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("reduction axes [", absl::StrJoin(axes, ","),
                       "] name dimension ", d, " more than once"));
    }
    reduced[d] = true;
  }
  return reduced;
}

TensorShape ReducedShape(const TensorShape& in,
                         const std::vector<bool>& reduced, bool keep_dims) {
  std::vector<int64_t> out;
  for (int d = 0; d < in.dims(); ++d) {
    if (!reduced[d]) {
      out.push_back(in[d]);
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  return TensorShape(out);
}

namespace {

// Adds every element of `x` into `out` at the index its kept axes give,
// through `add(acc, value)`: the general case of SumInto, any mix of axes.
template <typename T, typename Add>
void StridedSumInto(const Tensor& x, const std::vector<bool>& reduced, T* out,
                    Add add) {
  const T* xp = x.data<T>().data();
  const int r = x.shape().dims();
  std::vector<int64_t> out_stride(r, 0);
  int64_t s = 1;
  for (int d = r - 1; d >= 0; --d) {
    if (!reduced[d]) {
      out_stride[d] = s;
      s *= x.shape()[d];
    }
  }
  std::vector<int64_t> idx(r, 0);
  int64_t o = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    out[o] = add(out[o], xp[i]);
    for (int d = r - 1; d >= 0; --d) {
      ++idx[d];
      o += out_stride[d];
      if (idx[d] < x.shape()[d]) break;
      o -= out_stride[d] * idx[d];
      idx[d] = 0;
    }
  }
}

// Sums `x` over the `reduced` axes into `out` (which has the product of the
// kept dimensions as its element count). Common layouts use Eigen's
// vectorised row/column sums; any other mix of axes a strided loop.
template <typename T>
void SumInto(const Tensor& x, const std::vector<bool>& reduced, T* out,
             int64_t out_n) {
  std::fill(out, out + out_n, T(0));
  if (x.num_elements() == 0) return;
  if constexpr (std::is_integral_v<T>) {
    // Integer sums wrap modulo 2^bits, as TensorFlow's CPU kernels do in
    // practice; added in the unsigned type, where wrapping is defined
    // (signed overflow is undefined behaviour, found by
    // reshape_reduce_fuzzer), and converted back (modular since C++20).
    using U = std::make_unsigned_t<T>;
    StridedSumInto(x, reduced, out, [](T a, T b) {
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    });
    return;
  }
  // Merge adjacent axes of the same kind; drop size-1 axes.
  std::vector<std::pair<bool, int64_t>> groups;
  for (int d = 0; d < x.shape().dims(); ++d) {
    if (x.shape()[d] == 1) continue;
    if (!groups.empty() && groups.back().first == reduced[d]) {
      groups.back().second *= x.shape()[d];
    } else {
      groups.emplace_back(reduced[d], x.shape()[d]);
    }
  }
  using RowMajor =
      Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMat = Eigen::Map<const RowMajor>;
  const T* xp = x.data<T>().data();
  if (groups.empty()) {
    out[0] = xp[0];
  } else if (groups.size() == 1) {
    if (groups[0].first) {
      out[0] = x.flat<T>().sum();
    } else {
      std::copy(xp, xp + x.num_elements(), out);
    }
  } else if (groups.size() == 2 && !groups[0].first) {
    // [kept, reduced]: row sums.
    ConstMat m(xp, groups[0].second, groups[1].second);
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(out, groups[0].second) =
        m.rowwise().sum();
  } else if (groups.size() <= 3 && groups[0].first == (groups.size() == 2)) {
    // [reduced, kept] or [kept, reduced, kept]: column sums per outer block.
    const bool outer = groups.size() == 3;
    const int64_t blocks = outer ? groups[0].second : 1;
    const int64_t rows = groups[outer ? 1 : 0].second;
    const int64_t cols = groups[outer ? 2 : 1].second;
    for (int64_t b = 0; b < blocks; ++b) {
      ConstMat m(xp + b * rows * cols, rows, cols);
      Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>(out + b * cols, cols) =
          m.colwise().sum();
    }
  } else {
    StridedSumInto(x, reduced, out, [](T a, T b) { return a + b; });
  }
}

template <bool kMean>
absl::Status ReduceKernel(OpKernelContext& ctx, bool keep) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<std::vector<int64_t>> axes = op_util::IntValues(ctx.input(1));
  if (!axes.ok()) return ctx.InvalidArgument(axes.status().message());
  absl::StatusOr<std::vector<bool>> reduced =
      ReducedAxes(*axes, x.shape().dims());
  if (!reduced.ok()) return ctx.InvalidArgument(reduced.status().message());
  // SumInto writes every element (zeros first), so no zeroed buffer.
  GG_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocate_output(
                        0, x.dtype(), ReducedShape(x.shape(), *reduced, keep)));
  // Reduced elements per output element. A product too large for any
  // tensor needs a dimension of 0 elsewhere in x: then either a reduced
  // dimension is 0 (the count is 0) or a kept one is (no outputs).
  int64_t count = 1;
  for (int d = 0; d < x.shape().dims(); ++d) {
    if ((*reduced)[d] && !MultiplySizes(count, x.shape()[d], &count)) {
      count = 0;
      break;
    }
  }
  absl::Status s = op_util::DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out->mutable_data<T>().data();
    SumInto<T>(x, *reduced, o, out->num_elements());
    if (kMean) {
      if constexpr (std::is_same_v<T, float>) {
        out->mutable_flat<T>() /= static_cast<float>(count);
      } else if (count > 0) {
        // Divided in int64: `count` may not fit T (a cast could make it 0).
        for (T& v : out->mutable_data<T>()) {
          v = static_cast<T>(static_cast<int64_t>(v) / count);
        }
      }
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return ctx.InvalidArgument(s.message());
  return absl::OkStatus();
}

template <bool kMean>
KernelFn BindReduce(const AttrMap& attrs) {
  const bool keep = GetAttrOr<bool>(attrs, "keep_dims", false);
  return
      [keep](OpKernelContext& ctx) { return ReduceKernel<kMean>(ctx, keep); };
}

}  // namespace

KernelFn BindSum(const AttrMap& attrs) { return BindReduce<false>(attrs); }
KernelFn BindMean(const AttrMap& attrs) { return BindReduce<true>(attrs); }

}  // namespace math_kernels
}  // namespace graphgc
