// Kernels of the broadcasting arithmetic ops and AddN (ops/math_kernels.h).
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/elementwise.h"
#include "ops/math_kernels.h"
#include "ops/op_util.h"
#include "util/status_macros.h"

namespace graphgc {
namespace math_kernels {

using elementwise::BinaryKernel;
using elementwise::NumericBinary;
using elementwise::Wrapping;

KernelFn ArithmeticKernel(Arithmetic op) {
  switch (op) {
    case Arithmetic::kAddV2:
      return NumericBinary<void>(
          Wrapping([](const auto& a, const auto& b) { return a + b; }));
    case Arithmetic::kSub:
      return NumericBinary<void>(
          Wrapping([](const auto& a, const auto& b) { return a - b; }));
    case Arithmetic::kMul:
      return NumericBinary<void>(
          Wrapping([](const auto& a, const auto& b) { return a * b; }));
    case Arithmetic::kMaximum:
      return NumericBinary<void>(
          [](const auto& a, const auto& b) { return a.max(b); });
    case Arithmetic::kMinimum:
      return NumericBinary<void>(
          [](const auto& a, const auto& b) { return a.min(b); });
    case Arithmetic::kRealDiv:
      return [](OpKernelContext& ctx) {
        return BinaryKernel<float, float>(
            ctx, [](const auto& a, const auto& b) { return a / b; });
      };
  }
  // Not reached: the switch names every Arithmetic (-Wswitch checks).
  return [op](OpKernelContext& ctx) {
    return ctx.InvalidArgument(
        absl::StrCat("unknown arithmetic kernel ", static_cast<int>(op)));
  };
}

// AddN: every input has input 0's shape (InvalidArgument naming the first
// that does not); integer sums wrap, as AddV2's.
absl::Status AddNKernel(OpKernelContext& ctx) {
  const Tensor& x0 = ctx.input(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).shape() != x0.shape()) {
      return ctx.InvalidArgument(absl::StrCat(
          "input ", i, " has shape ", ctx.input(i).shape().DebugString(),
          ", input 0 has ", x0.shape().DebugString()));
    }
  }
  GG_ASSIGN_OR_RETURN(
      Tensor out, op_util::NewUninitializedOutput(ctx, x0.dtype(), x0.shape()));
  GG_RETURN_IF_ERROR(op_util::DispatchNumeric(x0.dtype(), [&](auto tag) {
    using T = decltype(tag);
    auto o = out.mutable_flat<T>();
    o = x0.flat<T>();
    const auto add =
        Wrapping([](const auto& a, const auto& b) { return a + b; });
    for (int i = 1; i < ctx.num_inputs(); ++i)
      o = add(o, ctx.input(i).flat<T>());
    return absl::OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace math_kernels
}  // namespace graphgc
