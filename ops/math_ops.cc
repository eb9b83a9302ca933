// Math ops: broadcasting binary ops (AddV2, Sub, Mul, RealDiv, Maximum,
// Minimum, comparisons), AddN, unary ops (Neg, Square, Sqrt, Exp, Log,
// Sigmoid, Tanh), MatMul, reductions (Sum, Mean) and ArgMax: their shape
// functions, gradients and registration, and the MatMul and ArgMax kernels.
// The Eigen kernels are in ops/math_*_kernels.cc (ops/math_kernels.h).
#include "ops/math_ops.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/math_kernels.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/small_gemm.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using op_util::CheckDtype;
using op_util::DispatchNumeric;
using op_util::GradName;
using op_util::IntValues;
using op_util::MakeOp;
using op_util::MustRegister;
using op_util::NewOutput;
using op_util::UnbroadcastGrad;

using Grads = std::vector<std::optional<Output>>;

constexpr std::initializer_list<DataType> kNumeric = {DT_FLOAT, DT_INT32,
                                                      DT_INT64};
constexpr std::initializer_list<DataType> kIndexTypes = {DT_INT32, DT_INT64};

absl::StatusOr<std::vector<OutputInfo>> BinaryShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in,
    std::initializer_list<DataType> allowed, bool bool_output) {
  GG_RETURN_IF_ERROR(op_util::CheckInputsMatchT(attrs, in, allowed));
  GG_ASSIGN_OR_RETURN(TensorShape s,
                      op_util::BroadcastShapes(in[0].shape, in[1].shape));
  return std::vector<OutputInfo>{{bool_output ? DT_BOOL : in[0].dtype, s}};
}

// Gradients that are float only: nullopt for every input otherwise.
bool NoFloatGrad(const GradContext& ctx) {
  return !ctx.grad_outputs[0].has_value() ||
         GetAttrOr<DataType>(ctx.node.attrs, "T", DT_INVALID) != DT_FLOAT;
}

// gx and gy of a binary op from the full-shape gradients.
absl::StatusOr<Grads> Unbroadcast(const GradContext& ctx,
                                  std::optional<Output> gx,
                                  std::optional<Output> gy) {
  const Output& x = ctx.node.inputs[0];
  const Output& y = ctx.node.inputs[1];
  Grads out(2);
  if (gx.has_value()) {
    GG_ASSIGN_OR_RETURN(out[0], UnbroadcastGrad(ctx, *gx, x, y, "x"));
  }
  if (gy.has_value()) {
    GG_ASSIGN_OR_RETURN(out[1], UnbroadcastGrad(ctx, *gy, y, x, "y"));
  }
  return out;
}

absl::StatusOr<Grads> AddGrad(const GradContext& ctx) {
  if (NoFloatGrad(ctx)) return Grads(2);
  return Unbroadcast(ctx, ctx.grad_outputs[0], ctx.grad_outputs[0]);
}

absl::StatusOr<Grads> SubGrad(const GradContext& ctx) {
  if (NoFloatGrad(ctx)) return Grads(2);
  GG_ASSIGN_OR_RETURN(Output neg, ops::Neg(*ctx.grad_outputs[0],
                                           {.name = GradName(ctx, "Neg")}));
  return Unbroadcast(ctx, ctx.grad_outputs[0], neg);
}

absl::StatusOr<Grads> MulGrad(const GradContext& ctx) {
  if (NoFloatGrad(ctx)) return Grads(2);
  const Output& g = *ctx.grad_outputs[0];
  GG_ASSIGN_OR_RETURN(Output gx, ops::Mul(g, ctx.node.inputs[1],
                                          {.name = GradName(ctx, "Mul")}));
  GG_ASSIGN_OR_RETURN(Output gy, ops::Mul(ctx.node.inputs[0], g,
                                          {.name = GradName(ctx, "Mul_1")}));
  return Unbroadcast(ctx, gx, gy);
}

absl::StatusOr<Grads> RealDivGrad(const GradContext& ctx) {
  if (NoFloatGrad(ctx)) return Grads(2);
  const Output& g = *ctx.grad_outputs[0];
  const Output& x = ctx.node.inputs[0];
  const Output& y = ctx.node.inputs[1];
  GG_ASSIGN_OR_RETURN(Output gx,
                      ops::RealDiv(g, y, {.name = GradName(ctx, "RealDiv")}));
  // d(x/y)/dy = -x / y^2, as (-x / y) / y.
  GG_ASSIGN_OR_RETURN(Output nx, ops::Neg(x, {.name = GradName(ctx, "Neg")}));
  GG_ASSIGN_OR_RETURN(
      Output q1, ops::RealDiv(nx, y, {.name = GradName(ctx, "RealDiv_1")}));
  GG_ASSIGN_OR_RETURN(
      Output q2, ops::RealDiv(q1, y, {.name = GradName(ctx, "RealDiv_2")}));
  GG_ASSIGN_OR_RETURN(Output gy,
                      ops::Mul(g, q2, {.name = GradName(ctx, "Mul")}));
  return Unbroadcast(ctx, gx, gy);
}

// Maximum / Minimum: the gradient goes to x where x won (ties to x), else y.
absl::StatusOr<Grads> SelectGrad(const GradContext& ctx, bool maximum) {
  if (NoFloatGrad(ctx)) return Grads(2);
  const Output& g = *ctx.grad_outputs[0];
  const Output& x = ctx.node.inputs[0];
  const Output& y = ctx.node.inputs[1];
  absl::StatusOr<Output> mask =
      maximum ? ops::GreaterEqual(x, y, {.name = GradName(ctx, "GreaterEqual")})
              : ops::LessEqual(x, y, {.name = GradName(ctx, "LessEqual")});
  if (!mask.ok()) return mask.status();
  GG_ASSIGN_OR_RETURN(Output fmask, ops::Cast(*mask, DT_FLOAT,
                                              {.name = GradName(ctx, "Cast")}));
  GG_ASSIGN_OR_RETURN(Output gx,
                      ops::Mul(g, fmask, {.name = GradName(ctx, "Mul")}));
  GG_ASSIGN_OR_RETURN(Output gy,
                      ops::Sub(g, gx, {.name = GradName(ctx, "Sub")}));
  return Unbroadcast(ctx, gx, gy);
}

void RegisterBinaryOps(OpRegistry& r) {
  using math_kernels::Arithmetic;
  using math_kernels::ArithmeticKernel;
  using math_kernels::Comparison;
  using math_kernels::ComparisonKernel;
  auto numeric_shape = [](const AttrMap& attrs,
                          absl::Span<const InputInfo> in) {
    return BinaryShape(attrs, in, kNumeric, false);
  };
  MustRegister(r, MakeOp("AddV2", {"x", "y"}, 1, {{"T", "type"}}, numeric_shape,
                         ArithmeticKernel(Arithmetic::kAddV2), AddGrad));
  MustRegister(r, MakeOp("Sub", {"x", "y"}, 1, {{"T", "type"}}, numeric_shape,
                         ArithmeticKernel(Arithmetic::kSub), SubGrad));
  MustRegister(r, MakeOp("Mul", {"x", "y"}, 1, {{"T", "type"}}, numeric_shape,
                         ArithmeticKernel(Arithmetic::kMul), MulGrad));
  MustRegister(
      r, MakeOp("Maximum", {"x", "y"}, 1, {{"T", "type"}}, numeric_shape,
                ArithmeticKernel(Arithmetic::kMaximum),
                [](const GradContext& ctx) { return SelectGrad(ctx, true); }));
  MustRegister(
      r, MakeOp("Minimum", {"x", "y"}, 1, {{"T", "type"}}, numeric_shape,
                ArithmeticKernel(Arithmetic::kMinimum),
                [](const GradContext& ctx) { return SelectGrad(ctx, false); }));
  MustRegister(r, MakeOp(
                      "RealDiv", {"x", "y"}, 1, {{"T", "type"}},
                      [](const AttrMap& attrs, absl::Span<const InputInfo> in) {
                        return BinaryShape(attrs, in, {DT_FLOAT}, false);
                      },
                      ArithmeticKernel(Arithmetic::kRealDiv), RealDivGrad));

  // Comparisons: bool outputs, no gradient.
  auto compare_shape = [](const AttrMap& attrs,
                          absl::Span<const InputInfo> in) {
    return BinaryShape(attrs, in, kNumeric, true);
  };
  MustRegister(r, MakeOp(
                      "Equal", {"x", "y"}, 1,
                      {{"T", "type"},
                       {"incompatible_shape_error", "bool", AttrValue(true)}},
                      [](const AttrMap& attrs, absl::Span<const InputInfo> in) {
                        return BinaryShape(
                            attrs, in, {DT_FLOAT, DT_INT32, DT_INT64, DT_BOOL},
                            true);
                      },
                      ComparisonKernel(Comparison::kEqual)));
  MustRegister(r,
               MakeOp("Greater", {"x", "y"}, 1, {{"T", "type"}}, compare_shape,
                      ComparisonKernel(Comparison::kGreater)));
  MustRegister(
      r, MakeOp("GreaterEqual", {"x", "y"}, 1, {{"T", "type"}}, compare_shape,
                ComparisonKernel(Comparison::kGreaterEqual)));
  MustRegister(r, MakeOp("Less", {"x", "y"}, 1, {{"T", "type"}}, compare_shape,
                         ComparisonKernel(Comparison::kLess)));
  MustRegister(
      r, MakeOp("LessEqual", {"x", "y"}, 1, {{"T", "type"}}, compare_shape,
                ComparisonKernel(Comparison::kLessEqual)));
}

// --- AddN ---

void RegisterAddN(OpRegistry& r) {
  RegisteredOp op = MakeOp(
      "AddN", {"inputs"}, 1, {{"N", "int"}, {"T", "type"}},
      [](const AttrMap& attrs, absl::Span<const InputInfo> in)
          -> absl::StatusOr<std::vector<OutputInfo>> {
        GG_RETURN_IF_ERROR(op_util::CheckInputsMatchT(attrs, in, kNumeric));
        TensorShape s = in[0].shape;
        for (size_t i = 1; i < in.size(); ++i) {
          if (in[i].shape.dims() != s.dims()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "input ", i, " has shape ", in[i].shape.DebugString(),
                ", input 0 has ", in[0].shape.DebugString()));
          }
          for (int d = 0; d < s.dims(); ++d) {
            if (s[d] == -1) {
              s.set_dim(d, in[i].shape[d]);
            } else if (in[i].shape[d] != -1 && in[i].shape[d] != s[d]) {
              return absl::InvalidArgumentError(absl::StrCat(
                  "input ", i, " has shape ", in[i].shape.DebugString(),
                  ", input 0 has ", in[0].shape.DebugString()));
            }
          }
        }
        return std::vector<OutputInfo>{{in[0].dtype, s}};
      },
      math_kernels::AddNKernel,
      [](const GradContext& ctx) -> absl::StatusOr<Grads> {
        return Grads(ctx.node.inputs.size(), ctx.grad_outputs[0]);
      });
  op.variadic = true;
  op.min_inputs = 1;
  MustRegister(r, std::move(op));
}

// --- unary ---

ShapeFn UnaryShape(std::initializer_list<DataType> allowed) {
  std::vector<DataType> types(allowed);
  return [types](const AttrMap& attrs, absl::Span<const InputInfo> in)
             -> absl::StatusOr<std::vector<OutputInfo>> {
    GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
    if (std::find(types.begin(), types.end(), t) == types.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("T must be ", types.size() == 1 ? "float" : "numeric",
                       ", got ", DataTypeString(t)));
    }
    if (in[0].dtype != t) {
      return absl::InvalidArgumentError(absl::StrCat(
          "x is ", DataTypeString(in[0].dtype), ", T is ", DataTypeString(t)));
    }
    return std::vector<OutputInfo>{{t, in[0].shape}};
  };
}

// A unary gradient: gx = build(g, x, y), float only.
template <typename B>
GradFn UnaryGrad(B build) {
  return [build](const GradContext& ctx) -> absl::StatusOr<Grads> {
    if (NoFloatGrad(ctx)) return Grads(1);
    GG_ASSIGN_OR_RETURN(Output gx, build(ctx, *ctx.grad_outputs[0],
                                         ctx.node.inputs[0], ctx.outputs[0]));
    return Grads{gx};
  };
}

void RegisterUnaryOps(OpRegistry& r) {
  MustRegister(r, MakeOp("Neg", {"x"}, 1, {{"T", "type"}}, UnaryShape(kNumeric),
                         math_kernels::UnaryKernel(math_kernels::Unary::kNeg),
                         UnaryGrad([](const GradContext& ctx, const Output& g,
                                      const Output&, const Output&) {
                           return ops::Neg(g, {.name = GradName(ctx, "Neg")});
                         })));
  MustRegister(
      r,
      MakeOp(
          "Square", {"x"}, 1, {{"T", "type"}}, UnaryShape(kNumeric),
          math_kernels::UnaryKernel(math_kernels::Unary::kSquare),
          UnaryGrad([](const GradContext& ctx, const Output& g, const Output& x,
                       const Output&) -> absl::StatusOr<Output> {
            GG_ASSIGN_OR_RETURN(
                Output two,
                ops::ScalarLike(x, 2.0, {.name = GradName(ctx, "two")}));
            GG_ASSIGN_OR_RETURN(
                Output x2, ops::Mul(x, two, {.name = GradName(ctx, "Mul")}));
            return ops::Mul(g, x2, {.name = GradName(ctx, "Mul_1")});
          })));
  MustRegister(
      r,
      MakeOp(
          "Sqrt", {"x"}, 1, {{"T", "type"}}, UnaryShape({DT_FLOAT}),
          math_kernels::UnaryKernel(math_kernels::Unary::kSqrt),
          UnaryGrad([](const GradContext& ctx, const Output& g, const Output& x,
                       const Output& y) -> absl::StatusOr<Output> {
            GG_ASSIGN_OR_RETURN(
                Output half,
                ops::ScalarLike(x, 0.5, {.name = GradName(ctx, "half")}));
            GG_ASSIGN_OR_RETURN(
                Output gh, ops::Mul(g, half, {.name = GradName(ctx, "Mul")}));
            return ops::RealDiv(gh, y, {.name = GradName(ctx, "RealDiv")});
          })));
  MustRegister(r,
               MakeOp("Exp", {"x"}, 1, {{"T", "type"}}, UnaryShape({DT_FLOAT}),
                      math_kernels::UnaryKernel(math_kernels::Unary::kExp),
                      UnaryGrad([](const GradContext& ctx, const Output& g,
                                   const Output&, const Output& y) {
                        return ops::Mul(g, y, {.name = GradName(ctx, "Mul")});
                      })));
  MustRegister(
      r, MakeOp("Log", {"x"}, 1, {{"T", "type"}}, UnaryShape({DT_FLOAT}),
                math_kernels::UnaryKernel(math_kernels::Unary::kLog),
                UnaryGrad([](const GradContext& ctx, const Output& g,
                             const Output& x, const Output&) {
                  return ops::RealDiv(g, x, {.name = GradName(ctx, "RealDiv")});
                })));
  MustRegister(
      r,
      MakeOp(
          "Sigmoid", {"x"}, 1, {{"T", "type"}}, UnaryShape({DT_FLOAT}),
          math_kernels::UnaryKernel(math_kernels::Unary::kSigmoid),
          UnaryGrad([](const GradContext& ctx, const Output& g, const Output& x,
                       const Output& y) -> absl::StatusOr<Output> {
            GG_ASSIGN_OR_RETURN(
                Output one,
                ops::ScalarLike(x, 1.0, {.name = GradName(ctx, "one")}));
            GG_ASSIGN_OR_RETURN(
                Output d, ops::Sub(one, y, {.name = GradName(ctx, "Sub")}));
            GG_ASSIGN_OR_RETURN(Output yd,
                                ops::Mul(y, d, {.name = GradName(ctx, "Mul")}));
            return ops::Mul(g, yd, {.name = GradName(ctx, "Mul_1")});
          })));
  MustRegister(
      r,
      MakeOp(
          "Tanh", {"x"}, 1, {{"T", "type"}}, UnaryShape({DT_FLOAT}),
          math_kernels::UnaryKernel(math_kernels::Unary::kTanh),
          UnaryGrad([](const GradContext& ctx, const Output& g, const Output& x,
                       const Output& y) -> absl::StatusOr<Output> {
            GG_ASSIGN_OR_RETURN(
                Output one,
                ops::ScalarLike(x, 1.0, {.name = GradName(ctx, "one")}));
            GG_ASSIGN_OR_RETURN(
                Output y2, ops::Square(y, {.name = GradName(ctx, "Square")}));
            GG_ASSIGN_OR_RETURN(
                Output d, ops::Sub(one, y2, {.name = GradName(ctx, "Sub")}));
            return ops::Mul(g, d, {.name = GradName(ctx, "Mul")});
          })));
}

// --- MatMul ---

absl::StatusOr<std::vector<OutputInfo>> MatMulShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(op_util::CheckInputsMatchT(attrs, in, {DT_FLOAT}));
  GG_ASSIGN_OR_RETURN(bool ta, GetAttr<bool>(attrs, "transpose_a"));
  GG_ASSIGN_OR_RETURN(bool tb, GetAttr<bool>(attrs, "transpose_b"));
  for (int i = 0; i < 2; ++i) {
    if (in[i].shape.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(i == 0 ? "a" : "b", " must be a matrix, got shape ",
                       in[i].shape.DebugString()));
    }
  }
  const int64_t m = in[0].shape[ta ? 1 : 0];
  const int64_t ka = in[0].shape[ta ? 0 : 1];
  const int64_t kb = in[1].shape[tb ? 1 : 0];
  const int64_t n = in[1].shape[tb ? 0 : 1];
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return absl::InvalidArgumentError(
        absl::StrCat("inner dimensions ", ka, " vs ", kb, " (a ",
                     in[0].shape.DebugString(), ta ? " transposed" : "", ", b ",
                     in[1].shape.DebugString(), tb ? " transposed" : "", ")"));
  }
  return std::vector<OutputInfo>{{DT_FLOAT, TensorShape{m, n}}};
}

absl::Status MatMulKernel(OpKernelContext& ctx, bool ta, bool tb) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.shape().dims() != 2 || b.shape().dims() != 2) {
    return ctx.InvalidArgument(absl::StrCat("needs matrices, got ",
                                            a.shape().DebugString(), " and ",
                                            b.shape().DebugString()));
  }
  const int64_t m = a.shape()[ta ? 1 : 0];
  const int64_t ka = a.shape()[ta ? 0 : 1];
  const int64_t kb = b.shape()[tb ? 1 : 0];
  const int64_t n = b.shape()[tb ? 0 : 1];
  if (ka != kb) {
    return ctx.InvalidArgument(absl::StrCat(
        "inner dimensions ", ka, " vs ", kb, " (a ", a.shape().DebugString(),
        ", b ", b.shape().DebugString(), ")"));
  }
  GG_ASSIGN_OR_RETURN(Tensor * out,
                      ctx.allocate_output(0, DT_FLOAT, TensorShape{m, n}));
  // Register-blocked for small products, Eigen's blocked GEMM otherwise,
  // its rows shared across the intra-op threads when large.
  op_util::ParallelMatMul(ctx, a.data<float>().data(), b.data<float>().data(),
                          out->mutable_data<float>().data(), m, n, ka, ta, tb);
  return absl::OkStatus();
}

KernelFn BindMatMul(const AttrMap& attrs) {
  const bool ta = GetAttrOr<bool>(attrs, "transpose_a", false);
  const bool tb = GetAttrOr<bool>(attrs, "transpose_b", false);
  return [ta, tb](OpKernelContext& ctx) { return MatMulKernel(ctx, ta, tb); };
}

absl::StatusOr<Grads> MatMulGrad(const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) return Grads(2);
  const Output& g = *ctx.grad_outputs[0];
  const Output& a = ctx.node.inputs[0];
  const Output& b = ctx.node.inputs[1];
  const bool ta = GetAttrOr<bool>(ctx.node.attrs, "transpose_a", false);
  const bool tb = GetAttrOr<bool>(ctx.node.attrs, "transpose_b", false);
  const std::string na = GradName(ctx, "MatMul");
  const std::string nb = GradName(ctx, "MatMul_1");
  absl::StatusOr<Output> ga, gb;
  if (!ta && !tb) {
    ga = ops::MatMul(g, b, {.name = na, .transpose_b = true});
    gb = ops::MatMul(a, g, {.name = nb, .transpose_a = true});
  } else if (!ta && tb) {
    ga = ops::MatMul(g, b, {.name = na});
    gb = ops::MatMul(g, a, {.name = nb, .transpose_a = true});
  } else if (ta && !tb) {
    ga = ops::MatMul(b, g, {.name = na, .transpose_b = true});
    gb = ops::MatMul(a, g, {.name = nb});
  } else {
    ga = ops::MatMul(b, g,
                     {.name = na, .transpose_a = true, .transpose_b = true});
    gb = ops::MatMul(g, a,
                     {.name = nb, .transpose_a = true, .transpose_b = true});
  }
  if (!ga.ok()) return ga.status();
  if (!gb.ok()) return gb.status();
  return Grads{*ga, *gb};
}

// --- Sum, Mean ---
absl::StatusOr<std::vector<OutputInfo>> ReduceShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
  GG_RETURN_IF_ERROR(CheckDtype(t, kNumeric, "T"));
  if (in[0].dtype != t) {
    return absl::InvalidArgumentError(
        absl::StrCat("input is ", DataTypeString(in[0].dtype), ", T is ",
                     DataTypeString(t)));
  }
  GG_RETURN_IF_ERROR(CheckDtype(in[1].dtype, kIndexTypes, "reduction_indices"));
  if (in[1].shape.dims() > 1) {
    return absl::InvalidArgumentError("reduction_indices must be a vector");
  }
  GG_ASSIGN_OR_RETURN(bool keep, GetAttr<bool>(attrs, "keep_dims"));
  const int rank = in[0].shape.dims();
  if (!in[1].value.has_value()) {
    if (keep) {
      return std::vector<OutputInfo>{
          {t, TensorShape(std::vector<int64_t>(rank, -1))}};
    }
    const int64_t k = in[1].shape.dims() == 0 ? 1 : in[1].shape[0];
    if (k < 0) {
      return absl::InvalidArgumentError(
          "with keep_dims false, the number of reduction axes must be known "
          "when the graph is built");
    }
    return std::vector<OutputInfo>{
        {t, TensorShape(
                std::vector<int64_t>(std::max<int64_t>(rank - k, 0), -1))}};
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> axes, IntValues(*in[1].value));
  GG_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                      math_kernels::ReducedAxes(axes, rank));
  return std::vector<OutputInfo>{
      {t, math_kernels::ReducedShape(in[0].shape, reduced, keep)}};
}
// The gradient of Sum (and, divided by the count, of Mean): the output
// gradient reshaped to x's rank with 1s on reduced axes, broadcast to x.
absl::StatusOr<Grads> ReduceGrad(const GradContext& ctx, bool mean) {
  if (NoFloatGrad(ctx)) return Grads(2);
  const Output& x = ctx.node.inputs[0];
  std::optional<Tensor> axes_value = op_util::ConstValueOf(ctx.node.inputs[1]);
  if (!axes_value.has_value()) {
    return absl::UnimplementedError(
        absl::StrCat(ctx.node.op, " '", ctx.node.name,
                     "': gradient needs constant reduction axes"));
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> axes, IntValues(*axes_value));
  const TensorShape& xs = x.shape();
  GG_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                      math_kernels::ReducedAxes(axes, xs.dims()));
  Output g = *ctx.grad_outputs[0];
  if (!GetAttrOr<bool>(ctx.node.attrs, "keep_dims", false)) {
    TensorShape kept = math_kernels::ReducedShape(xs, reduced, true);
    int unknown = 0;
    for (int64_t d : kept.dim_sizes()) unknown += d < 0;
    if (unknown <= 1) {
      GG_ASSIGN_OR_RETURN(
          g, ops::Reshape(g, kept, {.name = GradName(ctx, "Reshape")}));
    } else {
      // kept = Shape(x) * mask + (1 - mask), mask 0 on reduced axes.
      std::vector<int32_t> mask(xs.dims()), inv(xs.dims());
      for (int d = 0; d < xs.dims(); ++d) {
        mask[d] = reduced[d] ? 0 : 1;
        inv[d] = 1 - mask[d];
      }
      Graph& graph = *x.graph();
      GG_ASSIGN_OR_RETURN(Output sx,
                          ops::Shape(x, {.name = GradName(ctx, "Shape")}));
      GG_ASSIGN_OR_RETURN(
          Tensor mask_value,
          op_util::VectorTensor<int32_t>(absl::Span<const int32_t>(mask)));
      GG_ASSIGN_OR_RETURN(
          Tensor inv_value,
          op_util::VectorTensor<int32_t>(absl::Span<const int32_t>(inv)));
      GG_ASSIGN_OR_RETURN(Output m,
                          ops::Const(graph, std::move(mask_value),
                                     {.name = GradName(ctx, "mask")}));
      GG_ASSIGN_OR_RETURN(Output im,
                          ops::Const(graph, std::move(inv_value),
                                     {.name = GradName(ctx, "inverse_mask")}));
      GG_ASSIGN_OR_RETURN(
          Output sm, ops::Mul(sx, m, {.name = GradName(ctx, "Mul_shape")}));
      GG_ASSIGN_OR_RETURN(
          Output ks, ops::AddV2(sm, im, {.name = GradName(ctx, "kept_shape")}));
      GG_ASSIGN_OR_RETURN(
          g, ops::Reshape(g, ks, {.name = GradName(ctx, "Reshape")}));
    }
  }
  GG_ASSIGN_OR_RETURN(Output ones,
                      ops::OnesLike(x, {.name = GradName(ctx, "OnesLike")}));
  GG_ASSIGN_OR_RETURN(Output gx,
                      ops::Mul(g, ones, {.name = GradName(ctx, "Broadcast")}));
  if (mean) {
    int64_t count = 1;
    bool known = true;
    for (int d = 0; d < xs.dims(); ++d) {
      // An unknown dimension fails the check as well.
      if (reduced[d] && !MultiplySizes(count, xs[d], &count)) known = false;
    }
    Output divisor;
    if (known) {
      GG_ASSIGN_OR_RETURN(divisor,
                          ops::Const(*x.graph(), static_cast<float>(count),
                                     {.name = GradName(ctx, "count")}));
    } else {
      GG_ASSIGN_OR_RETURN(Output nx,
                          ops::Size(x, {.name = GradName(ctx, "Size")}));
      GG_ASSIGN_OR_RETURN(
          Output fx, ops::Cast(nx, DT_FLOAT, {.name = GradName(ctx, "Cast")}));
      const TensorShape& ys = ctx.outputs[0].shape();
      if (ys.IsFullyDefined() && ys.num_elements() == 1) {
        // A full reduction (a training loss): the count is Size(x). Saves
        // three kernels per training step.
        divisor = fx;
      } else {
        GG_ASSIGN_OR_RETURN(
            Output ny,
            ops::Size(ctx.outputs[0], {.name = GradName(ctx, "Size_1")}));
        GG_ASSIGN_OR_RETURN(
            Output fy,
            ops::Cast(ny, DT_FLOAT, {.name = GradName(ctx, "Cast_1")}));
        GG_ASSIGN_OR_RETURN(
            divisor, ops::RealDiv(fx, fy, {.name = GradName(ctx, "count")}));
      }
    }
    GG_ASSIGN_OR_RETURN(
        gx, ops::RealDiv(gx, divisor, {.name = GradName(ctx, "RealDiv")}));
  }
  return Grads{gx, std::nullopt};
}

// --- ArgMax ---

absl::StatusOr<std::vector<OutputInfo>> ArgMaxShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
  GG_RETURN_IF_ERROR(CheckDtype(t, kNumeric, "T"));
  GG_ASSIGN_OR_RETURN(DataType ot, GetAttr<DataType>(attrs, "output_type"));
  GG_RETURN_IF_ERROR(CheckDtype(ot, kIndexTypes, "output_type"));
  GG_RETURN_IF_ERROR(CheckDtype(in[1].dtype, kIndexTypes, "dimension"));
  if (in[0].dtype != t) {
    return absl::InvalidArgumentError(
        absl::StrCat("input is ", DataTypeString(in[0].dtype), ", T is ",
                     DataTypeString(t)));
  }
  const int rank = in[0].shape.dims();
  if (rank == 0) {
    return absl::InvalidArgumentError("input must have rank >= 1");
  }
  if (in[1].shape.dims() != 0) {
    return absl::InvalidArgumentError("dimension must be a scalar");
  }
  if (!in[1].value.has_value()) {
    return std::vector<OutputInfo>{
        {ot, TensorShape(std::vector<int64_t>(rank - 1, -1))}};
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> axis, IntValues(*in[1].value));
  GG_ASSIGN_OR_RETURN(int d, op_util::NormaliseAxis(axis[0], rank));
  TensorShape out = in[0].shape;
  out.RemoveDim(d);
  return std::vector<OutputInfo>{{ot, out}};
}

absl::Status ArgMaxKernel(OpKernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<std::vector<int64_t>> axis = IntValues(ctx.input(1));
  if (!axis.ok() || axis->size() != 1) {
    return ctx.InvalidArgument("dimension must be an int scalar");
  }
  absl::StatusOr<int> d = op_util::NormaliseAxis((*axis)[0], x.shape().dims());
  if (!d.ok()) return ctx.InvalidArgument(d.status().message());
  const int64_t len = x.shape()[*d];
  if (len == 0) {
    return ctx.InvalidArgument(absl::StrCat("reduces an empty dimension ", *d,
                                            " of shape ",
                                            x.shape().DebugString()));
  }
  TensorShape out_shape = x.shape();
  out_shape.RemoveDim(*d);
  const DataType ot = GetAttrOr<DataType>(ctx.attrs(), "output_type", DT_INT64);
  GG_ASSIGN_OR_RETURN(Tensor out, NewOutput(ctx, ot, out_shape));
  int64_t inner = 1;
  for (int i = *d + 1; i < x.shape().dims(); ++i) inner *= x.shape()[i];
  const int64_t outer = out.num_elements() / std::max<int64_t>(inner, 1);
  absl::Status s = DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>().data();
    return DispatchNumeric(ot, [&](auto otag) {
      using O = decltype(otag);
      if constexpr (!std::is_same_v<O, float>) {
        O* op = out.mutable_data<O>().data();
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            const T* base = xp + o * len * inner + i;
            int64_t best = 0;
            for (int64_t k = 1; k < len; ++k) {
              if (base[k * inner] > base[best * inner]) best = k;
            }
            op[o * inner + i] = static_cast<O>(best);
          }
        }
      }
      return absl::OkStatus();
    });
  });
  if (!s.ok()) return ctx.InvalidArgument(s.message());
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterMathOps(OpRegistry& r) {
  RegisterBinaryOps(r);
  RegisterAddN(r);
  RegisterUnaryOps(r);
  MustRegister(r, MakeOp("MatMul", {"a", "b"}, 1,
                         {{"transpose_a", "bool", AttrValue(false)},
                          {"transpose_b", "bool", AttrValue(false)},
                          {"T", "type"},
                          {"grad_a", "bool", AttrValue(false)},
                          {"grad_b", "bool", AttrValue(false)}},
                         MatMulShape, BindMatMul, MatMulGrad));
  const std::vector<AttrSpec> reduce_attrs = {
      {"keep_dims", "bool", AttrValue(false)},
      {"T", "type"},
      {"Tidx", "type", AttrValue(DT_INT32)}};
  MustRegister(
      r, MakeOp("Sum", {"input", "reduction_indices"}, 1, reduce_attrs,
                ReduceShape, math_kernels::BindSum,
                [](const GradContext& ctx) { return ReduceGrad(ctx, false); }));
  MustRegister(
      r, MakeOp("Mean", {"input", "reduction_indices"}, 1, reduce_attrs,
                ReduceShape, math_kernels::BindMean,
                [](const GradContext& ctx) { return ReduceGrad(ctx, true); }));
  MustRegister(r, MakeOp("ArgMax", {"input", "dimension"}, 1,
                         {{"T", "type"},
                          {"Tidx", "type", AttrValue(DT_INT32)},
                          {"output_type", "type", AttrValue(DT_INT64)}},
                         ArgMaxShape, ArgMaxKernel));
}

}  // namespace graphgc
