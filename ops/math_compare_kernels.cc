// Kernels of the broadcasting comparison ops (ops/math_kernels.h).
#include "absl/strings/str_cat.h"
#include "ops/elementwise.h"
#include "ops/math_kernels.h"
#include "ops/op_util.h"

namespace graphgc {
namespace math_kernels {

using elementwise::BinaryKernel;
using elementwise::NumericBinary;

KernelFn ComparisonKernel(Comparison op) {
  switch (op) {
    case Comparison::kEqual:
      return [](OpKernelContext& ctx) -> absl::Status {
        return op_util::DispatchAll(ctx.input(0).dtype(), [&](auto tag) {
          using T = decltype(tag);
          return BinaryKernel<T, bool>(
              ctx, [](const auto& a, const auto& b) { return a == b; });
        });
      };
    case Comparison::kGreater:
      return NumericBinary<bool>(
          [](const auto& a, const auto& b) { return a > b; });
    case Comparison::kGreaterEqual:
      return NumericBinary<bool>(
          [](const auto& a, const auto& b) { return a >= b; });
    case Comparison::kLess:
      return NumericBinary<bool>(
          [](const auto& a, const auto& b) { return a < b; });
    case Comparison::kLessEqual:
      return NumericBinary<bool>(
          [](const auto& a, const auto& b) { return a <= b; });
  }
  // Not reached: the switch names every Comparison (-Wswitch checks).
  return [op](OpKernelContext& ctx) {
    return ctx.InvalidArgument(
        absl::StrCat("unknown comparison kernel ", static_cast<int>(op)));
  };
}

}  // namespace math_kernels
}  // namespace graphgc
