#include "ops/op_util.h"

#include "absl/strings/str_join.h"
#include "ops/ops.h"
#include "runtime/node_view.h"
#include "util/status_macros.h"

namespace graphgc {
namespace op_util {

absl::Status CheckDtype(DataType dtype, std::initializer_list<DataType> allowed,
                        absl::string_view what) {
  for (DataType d : allowed) {
    if (d == dtype) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must be one of {",
                   absl::StrJoin(allowed, ", ",
                                 [](std::string* out, DataType d) {
                                   absl::StrAppend(out, DataTypeString(d));
                                 }),
                   "}, got ", DataTypeString(dtype)));
}

absl::Status CheckInputsMatchT(const AttrMap& attrs,
                               absl::Span<const InputInfo> inputs,
                               std::initializer_list<DataType> allowed) {
  GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
  GG_RETURN_IF_ERROR(CheckDtype(t, allowed, "T"));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype != t) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " is ", DataTypeString(inputs[i].dtype),
          " but the op's type T is ", DataTypeString(t),
          i > 0 ? absl::StrCat(" (input 0 is ", DataTypeString(inputs[0].dtype),
                               ")")
                : ""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorShape> BroadcastShapes(const TensorShape& a,
                                            const TensorShape& b) {
  const int r = std::max(a.dims(), b.dims());
  std::vector<int64_t> out(r);
  for (int i = 0; i < r; ++i) {
    const int ia = i - (r - a.dims());
    const int ib = i - (r - b.dims());
    const int64_t da = ia >= 0 ? a[ia] : 1;
    const int64_t db = ib >= 0 ? b[ib] : 1;
    if (da == db) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da == -1) {
      out[i] = db;
    } else if (db == -1) {
      out[i] = da;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "incompatible shapes ", a.DebugString(), " and ", b.DebugString(),
          " (dimension ", i, ": ", da, " vs ", db, ")"));
    }
  }
  return TensorShape(out);
}

absl::StatusOr<std::vector<int64_t>> IntValues(const Tensor& t) {
  std::vector<int64_t> v;
  if (t.dtype() == DT_INT32) {
    for (int32_t x : t.data<int32_t>()) v.push_back(x);
  } else if (t.dtype() == DT_INT64) {
    for (int64_t x : t.data<int64_t>()) v.push_back(x);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected an int32 or int64 tensor, got ", DataTypeString(t.dtype())));
  }
  return v;
}

std::optional<TensorShape> KnownShapeValue(const InputInfo& in) {
  if (in.value.has_value()) {
    absl::StatusOr<std::vector<int64_t>> v = IntValues(*in.value);
    if (v.ok() && in.value->shape().dims() == 1) return TensorShape(*v);
    return std::nullopt;
  }
  return in.shape_value;
}

absl::StatusOr<int> NormaliseAxis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "axis ", axis, " is out of range for a tensor of rank ", rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

void MustRegister(OpRegistry& registry, RegisteredOp op) {
  registry.RegisterBuiltin(std::move(op));
}

RegisteredOp MakeOp(std::string type, std::vector<std::string> inputs,
                    int num_outputs, std::vector<AttrSpec> attrs,
                    ShapeFn shape_fn, KernelFn kernel, GradFn gradient) {
  RegisteredOp op;
  op.def.type = std::move(type);
  op.def.kernel = std::move(kernel);
  op.def.gradient = std::move(gradient);
  op.input_names = std::move(inputs);
  op.num_outputs = num_outputs;
  op.attrs = std::move(attrs);
  op.shape_fn = std::move(shape_fn);
  return op;
}

RegisteredOp MakeOp(std::string type, std::vector<std::string> inputs,
                    int num_outputs, std::vector<AttrSpec> attrs,
                    ShapeFn shape_fn, KernelBinder bind, GradFn gradient) {
  KernelFn kernel = [bind](OpKernelContext& ctx) {
    return bind(ctx.attrs())(ctx);
  };
  RegisteredOp op =
      MakeOp(std::move(type), std::move(inputs), num_outputs, std::move(attrs),
             std::move(shape_fn), std::move(kernel), std::move(gradient));
  op.def.bind = std::move(bind);
  return op;
}

std::optional<Tensor> ConstValueOf(const Output& out) {
  if (!out.valid()) return std::nullopt;
  const NodeView n(out);
  if (n.op() != "Const") return std::nullopt;
  auto it = n.attrs().find("value");
  if (it == n.attrs().end()) return std::nullopt;
  if (const Tensor* t = std::get_if<Tensor>(&it->second)) return *t;
  return std::nullopt;
}

absl::StatusOr<Tensor> NewOutput(const OpKernelContext& ctx, DataType dtype,
                                 const TensorShape& shape) {
  absl::StatusOr<Tensor> t = Tensor::Zeros(dtype, shape);
  if (!t.ok()) return ctx.Error(t.status());
  return t;
}

absl::StatusOr<Tensor> NewUninitializedOutput(const OpKernelContext& ctx,
                                              DataType dtype,
                                              const TensorShape& shape) {
  absl::StatusOr<Tensor> t = Tensor::Uninitialized(dtype, shape);
  if (!t.ok()) return ctx.Error(t.status());
  return t;
}

std::string GradName(const GradContext& ctx, absl::string_view what) {
  return absl::StrCat(ctx.name_scope, "/", ctx.node.name, "_grad/", what);
}

absl::StatusOr<Output> ZerosGrad(const GradContext& ctx, const Output& x) {
  return ops::ZerosLike(x, {.name = GradName(ctx, "zeros")});
}

absl::StatusOr<Output> UnbroadcastGrad(const GradContext& ctx,
                                       const Output& grad, const Output& x,
                                       const Output& other,
                                       absl::string_view what) {
  const TensorShape& xs = x.shape();
  const TensorShape& os = other.shape();
  const int r = std::max(xs.dims(), os.dims());
  std::vector<int64_t> leading;  // axes x lacks: summed away
  std::vector<int64_t> ones;     // axes where x has 1: summed, kept
  bool ambiguous = false;
  for (int i = 0; i < r; ++i) {
    const int ix = i - (r - xs.dims());
    const int io = i - (r - os.dims());
    if (ix < 0) {
      leading.push_back(i);
      continue;
    }
    const int64_t dx = xs[ix];
    const int64_t dother = io >= 0 ? os[io] : 1;
    if (dx == 1) {
      if (dother != 1) ones.push_back(i);
    } else if (dx == -1 && dother != 1) {
      ambiguous = true;
    }
  }
  if (ambiguous) {
    GG_ASSIGN_OR_RETURN(
        Output sx,
        ops::Shape(x, {.name = GradName(ctx, absl::StrCat(what, "/Shape"))}));
    GG_ASSIGN_OR_RETURN(
        Output so,
        ops::Shape(other, {.name = GradName(
                               ctx, absl::StrCat(what, "/Shape_other"))}));
    GG_ASSIGN_OR_RETURN(
        ops::BroadcastGradientArgsOutputs args,
        ops::BroadcastGradientArgs(
            sx, so,
            {.name = GradName(ctx, absl::StrCat(what, "/BroadcastArgs"))}));
    GG_ASSIGN_OR_RETURN(
        Output summed,
        ops::Sum(grad, args.r0,
                 {.name = GradName(ctx, absl::StrCat(what, "/Sum")),
                  .keep_dims = true}));
    return ops::Reshape(
        summed, sx, {.name = GradName(ctx, absl::StrCat(what, "/Reshape"))});
  }
  Output g = grad;
  if (!ones.empty()) {
    GG_ASSIGN_OR_RETURN(
        g, ops::Sum(g, {.name = GradName(ctx, absl::StrCat(what, "/Sum_kept")),
                        .axes = ones,
                        .keep_dims = true}));
  }
  if (!leading.empty()) {
    GG_ASSIGN_OR_RETURN(
        g, ops::Sum(g, {.name = GradName(ctx, absl::StrCat(what, "/Sum")),
                        .axes = leading,
                        .keep_dims = false}));
  }
  return g;
}

}  // namespace op_util
}  // namespace graphgc
