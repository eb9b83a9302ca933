// Kernels of the element-wise unary math ops (ops/math_kernels.h).
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/elementwise.h"
#include "ops/math_kernels.h"
#include "ops/op_util.h"
#include "util/status_macros.h"

namespace graphgc {
namespace math_kernels {
namespace {

using elementwise::Wrapping;

// A kernel of out = f(x), x float (kFloatOnly) or numeric.
template <bool kFloatOnly, typename F>
KernelFn UnaryFn(F f) {
  return [f](OpKernelContext& ctx) -> absl::Status {
    const Tensor& x = ctx.input(0);
    GG_ASSIGN_OR_RETURN(
        Tensor out, op_util::NewUninitializedOutput(ctx, x.dtype(), x.shape()));
    if constexpr (kFloatOnly) {
      if (x.dtype() != DT_FLOAT) {
        return ctx.InvalidArgument("needs a float input");
      }
      out.mutable_flat<float>() = f(x.flat<float>());
    } else {
      absl::Status s = op_util::DispatchNumeric(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        out.mutable_flat<T>() = f(x.flat<T>());
        return absl::OkStatus();
      });
      if (!s.ok()) return ctx.InvalidArgument(s.message());
    }
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  };
}

}  // namespace

KernelFn UnaryKernel(Unary op) {
  switch (op) {
    case Unary::kNeg:
      return UnaryFn<false>(Wrapping([](const auto& a) { return -a; }));
    case Unary::kSquare:
      return UnaryFn<false>(Wrapping([](const auto& a) { return a.square(); }));
    case Unary::kSqrt:
      return UnaryFn<true>([](const auto& a) { return a.sqrt(); });
    case Unary::kExp:
      return UnaryFn<true>([](const auto& a) { return a.exp(); });
    case Unary::kLog:
      return UnaryFn<true>([](const auto& a) { return a.log(); });
    case Unary::kSigmoid:
      return UnaryFn<true>(
          [](const auto& a) { return (1.0f + (-a).exp()).inverse(); });
    case Unary::kTanh:
      return UnaryFn<true>([](const auto& a) { return a.tanh(); });
  }
  // Not reached: the switch names every Unary (-Wswitch checks).
  return [op](OpKernelContext& ctx) {
    return ctx.InvalidArgument(
        absl::StrCat("unknown unary kernel ", static_cast<int>(op)));
  };
}

}  // namespace math_kernels
}  // namespace graphgc
