// ops/math_kernels.h
//
// The math ops' Eigen kernels, one translation unit per op family:
// math_binary_kernels.cc (AddV2, Sub, Mul, Maximum, Minimum, RealDiv, AddN),
// math_compare_kernels.cc (Equal, Greater, GreaterEqual, Less, LessEqual),
// math_unary_kernels.cc (Neg, Square, Sqrt, Exp, Log, Sigmoid, Tanh) and
// math_reduce_kernels.cc (Sum, Mean). Their template instantiations are most
// of //ops' compile time; split, they compile in parallel, and a change to
// one of them, or to math_ops.cc (shape functions, gradients, registration),
// recompiles only that file. Private to //ops: math_ops.cc registers them.
//
// Thread safety: stateless; kernels follow OpKernelContext's rules.
#ifndef GRAPHGC_OPS_MATH_KERNELS_H_
#define GRAPHGC_OPS_MATH_KERNELS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/attr_value.h"
#include "runtime/op_def.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace math_kernels {

// Broadcasting arithmetic: AddV2, Sub, Mul, Maximum, Minimum on float, int32
// and int64 (integers wrap modulo 2^bits), RealDiv on float.
enum class Arithmetic { kAddV2, kSub, kMul, kMaximum, kMinimum, kRealDiv };
KernelFn ArithmeticKernel(Arithmetic op);

// AddN: the element-wise sum of inputs of one shape and numeric dtype.
absl::Status AddNKernel(OpKernelContext& ctx);

// Broadcasting comparisons with bool outputs: Equal also on bool inputs,
// the others on float, int32 and int64.
enum class Comparison { kEqual, kGreater, kGreaterEqual, kLess, kLessEqual };
KernelFn ComparisonKernel(Comparison op);

// Element-wise unary ops: Neg and Square on float, int32 and int64
// (integers wrap), the others on float only.
enum class Unary { kNeg, kSquare, kSqrt, kExp, kLog, kSigmoid, kTanh };
KernelFn UnaryKernel(Unary op);

// Which axes of a rank-`rank` tensor `axes` names. As TensorFlow, an axis
// named twice (1 and 1, or 1 and -1 of a rank-2 tensor) is InvalidArgument.
absl::StatusOr<std::vector<bool>> ReducedAxes(absl::Span<const int64_t> axes,
                                              int rank);
// `in` without its `reduced` axes (kept as 1 with `keep_dims`).
TensorShape ReducedShape(const TensorShape& in,
                         const std::vector<bool>& reduced, bool keep_dims);

// Sum and Mean over the axes of input 1, bound to the node's keep_dims.
KernelFn BindSum(const AttrMap& attrs);
KernelFn BindMean(const AttrMap& attrs);

}  // namespace math_kernels
}  // namespace graphgc

#endif  // GRAPHGC_OPS_MATH_KERNELS_H_
