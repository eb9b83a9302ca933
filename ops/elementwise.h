// ops/elementwise.h
//
// The templates behind the math ops' element-wise kernels (private to
// //ops): Wrapping (integer arithmetic modulo 2^bits) and BinaryKernel
// (NumPy-broadcasting binary kernels over Eigen array expressions). Only
// the kernel files include it (math_binary_kernels.cc,
// math_compare_kernels.cc, math_unary_kernels.cc), so each op family's
// Eigen instantiations are compiled in one translation unit of its own.
//
// Thread safety: stateless; kernels follow OpKernelContext's rules.
#ifndef GRAPHGC_OPS_ELEMENTWISE_H_
#define GRAPHGC_OPS_ELEMENTWISE_H_

#include <type_traits>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "ops/op_util.h"
#include "runtime/op_def.h"
#include "runtime/tensor.h"
#include "util/status_macros.h"

namespace graphgc {
namespace elementwise {

// Integer arithmetic wraps modulo 2^bits, as TensorFlow's CPU kernels do in
// practice. Signed overflow is undefined behaviour in C++, so `f` runs on
// the operands cast to the unsigned type of the same width, where wrapping
// is defined, and the result is cast back (modular since C++20). Float
// operands go to `f` unchanged. `f` takes Eigen array expressions.
template <typename F>
auto Wrapping(F f) {
  return [f](const auto&... a) {
    using T = std::common_type_t<typename std::decay_t<decltype(a)>::Scalar...>;
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return f(a.template cast<U>()...).template cast<T>();
    } else {
      return f(a...);
    }
  };
}

// Whether `small` (leading 1s ignored) equals the trailing dims of `big`.
bool IsTrailingOf(const TensorShape& small, const TensorShape& big);

// Whether `small` is `big` with its trailing dimensions set to 1 (same
// rank), e.g. [b,1] of [b,n]: one value of `small` per run of `big`'s
// innermost elements.
bool IsLeadingOf(const TensorShape& small, const TensorShape& big);

// out = f(x, y) elementwise with NumPy broadcasting. `f` takes two Eigen
// array expressions and returns one, so Eigen vectorises every case: same
// shapes, a scalar side, a row vector repeated over rows ([b,n] op [n]), a
// column repeated over columns ([b,n] op [b,1]); any other broadcast
// materialises both sides first.
template <typename T, typename Out, typename F>
absl::Status BinaryKernel(OpKernelContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
  using ConstRow = Eigen::Map<const Arr>;
  using OutRow = Eigen::Map<Eigen::Array<Out, Eigen::Dynamic, 1>>;
  constexpr DataType kOut = DataTypeToEnum<Out>::value;
  // Equal shapes and a rank-0 side: the result has the other side's shape,
  // element i comes from element i of that side, so it may take over that
  // side's buffer. Other pairs need the general broadcasting rule.
  const bool same = x.shape() == y.shape();
  const bool y_scalar = !same && y.shape().dims() == 0;
  const bool x_scalar = !same && !y_scalar && x.shape().dims() == 0;
  if (same || y_scalar || x_scalar) {
    // Maps taken before a forward empties the input it takes.
    const Tensor::ConstFlat<T> xf = x.flat<T>();
    const Tensor::ConstFlat<T> yf = y.flat<T>();
    const int from = x_scalar ? 1 : 0;
    const Tensor& big = ctx.input(from);
    Tensor* out;
    if constexpr (std::is_same_v<T, Out>) {
      GG_ASSIGN_OR_RETURN(out, ctx.forward_input_or_allocate_output(
                                   from, 0, kOut, big.shape()));
    } else {
      GG_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, kOut, big.shape()));
    }
    const int64_t n = out->num_elements();
    if (n == 0) {
      // nothing to compute
    } else if (same) {
      out->mutable_flat<Out>() = f(xf, yf);
    } else if (y_scalar) {
      out->mutable_flat<Out>() = f(xf, Arr::Constant(n, yf[0]));
    } else {
      out->mutable_flat<Out>() = f(Arr::Constant(n, xf[0]), yf);
    }
    return absl::OkStatus();
  }
  absl::StatusOr<TensorShape> shape =
      op_util::BroadcastShapes(x.shape(), y.shape());
  if (!shape.ok()) return ctx.InvalidArgument(shape.status().message());
  GG_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, kOut, *shape));
  const int64_t n = out->num_elements();
  if (n == 0) {
    // nothing to compute
  } else if (y.num_elements() == 1 && x.shape() == *shape) {
    out->mutable_flat<Out>() = f(x.flat<T>(), Arr::Constant(n, y.data<T>()[0]));
  } else if (x.num_elements() == 1 && y.shape() == *shape) {
    out->mutable_flat<Out>() = f(Arr::Constant(n, x.data<T>()[0]), y.flat<T>());
  } else if (x.shape() == *shape && IsTrailingOf(y.shape(), x.shape())) {
    const int64_t inner = y.num_elements();
    Out* o = out->mutable_data<Out>().data();
    const T* xp = x.data<T>().data();
    for (int64_t r = 0; r < n / inner; ++r) {
      OutRow(o + r * inner, inner) =
          f(ConstRow(xp + r * inner, inner), y.flat<T>());
    }
  } else if (y.shape() == *shape && IsTrailingOf(x.shape(), y.shape())) {
    const int64_t inner = x.num_elements();
    Out* o = out->mutable_data<Out>().data();
    const T* yp = y.data<T>().data();
    for (int64_t r = 0; r < n / inner; ++r) {
      OutRow(o + r * inner, inner) =
          f(x.flat<T>(), ConstRow(yp + r * inner, inner));
    }
  } else if (x.shape() == *shape && IsLeadingOf(y.shape(), x.shape())) {
    const int64_t inner = n / y.num_elements();
    Out* o = out->mutable_data<Out>().data();
    const T* xp = x.data<T>().data();
    const T* yp = y.data<T>().data();
    for (int64_t r = 0; r < n / inner; ++r) {
      OutRow(o + r * inner, inner) =
          f(ConstRow(xp + r * inner, inner), Arr::Constant(inner, yp[r]));
    }
  } else if (y.shape() == *shape && IsLeadingOf(x.shape(), y.shape())) {
    const int64_t inner = n / x.num_elements();
    Out* o = out->mutable_data<Out>().data();
    const T* xp = x.data<T>().data();
    const T* yp = y.data<T>().data();
    for (int64_t r = 0; r < n / inner; ++r) {
      OutRow(o + r * inner, inner) =
          f(Arr::Constant(inner, xp[r]), ConstRow(yp + r * inner, inner));
    }
  } else {
    GG_ASSIGN_OR_RETURN(Tensor xb, op_util::BroadcastTo<T>(x, *shape));
    GG_ASSIGN_OR_RETURN(Tensor yb, op_util::BroadcastTo<T>(y, *shape));
    out->mutable_flat<Out>() = f(xb.flat<T>(), yb.flat<T>());
  }
  return absl::OkStatus();
}

// A kernel of BinaryKernel<T, Out> for T the input's numeric dtype (Out
// void: T too); other dtypes are InvalidArgument.
template <typename Out, typename F>
KernelFn NumericBinary(F f) {
  return [f](OpKernelContext& ctx) -> absl::Status {
    absl::Status s =
        op_util::DispatchNumeric(ctx.input(0).dtype(), [&](auto tag) {
          using T = decltype(tag);
          using O = std::conditional_t<std::is_same_v<Out, void>, T, Out>;
          return BinaryKernel<T, O>(ctx, f);
        });
    if (absl::IsUnimplemented(s)) return ctx.InvalidArgument(s.message());
    return s;
  };
}

}  // namespace elementwise
}  // namespace graphgc

#endif  // GRAPHGC_OPS_ELEMENTWISE_H_
