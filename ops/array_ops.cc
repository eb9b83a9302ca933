// Array ops: Placeholder, Const, Identity, StopGradient, NoOp, Reshape,
// Shape, Size, Fill, ZerosLike, OnesLike, Cast, Transpose,
// BroadcastGradientArgs.
#include "ops/array_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using op_util::CheckDtype;
using op_util::DispatchAll;
using op_util::GradName;
using op_util::IntValues;
using op_util::KnownShapeValue;
using op_util::MakeOp;
using op_util::MustRegister;
using op_util::NewOutput;

constexpr std::initializer_list<DataType> kAllTypes = {DT_FLOAT, DT_INT32,
                                                       DT_INT64, DT_BOOL};
constexpr std::initializer_list<DataType> kIndexTypes = {DT_INT32, DT_INT64};

absl::StatusOr<std::vector<OutputInfo>> Same(const InputInfo& in) {
  return std::vector<OutputInfo>{{in.dtype, in.shape}};
}

// --- Placeholder, Const, Identity, NoOp ---

void RegisterLeaves(OpRegistry& r) {
  RegisteredOp placeholder = MakeOp(
      "Placeholder", {}, 1, {{"dtype", "type"}, {"shape", "shape"}},
      [](const AttrMap& attrs, absl::Span<const InputInfo>)
          -> absl::StatusOr<std::vector<OutputInfo>> {
        GG_ASSIGN_OR_RETURN(DataType dt, GetAttr<DataType>(attrs, "dtype"));
        GG_RETURN_IF_ERROR(CheckDtype(dt, kAllTypes, "dtype"));
        GG_ASSIGN_OR_RETURN(TensorShape s,
                            GetAttr<TensorShape>(attrs, "shape"));
        return std::vector<OutputInfo>{{dt, s}};
      },
      [](OpKernelContext& ctx) -> absl::Status {
        return ctx.InvalidArgument("must be fed a value (it is a Placeholder)");
      });
  // A plan refuses one it would have to run (the kernel is for callers
  // without a plan).
  placeholder.def.dispatch = OpDef::Dispatch::kFeed;
  MustRegister(r, std::move(placeholder));
  RegisteredOp constant = MakeOp(
      "Const", {}, 1, {{"value", "tensor"}, {"dtype", "type"}},
      [](const AttrMap& attrs, absl::Span<const InputInfo>)
          -> absl::StatusOr<std::vector<OutputInfo>> {
        GG_ASSIGN_OR_RETURN(Tensor v, GetAttr<Tensor>(attrs, "value"));
        GG_ASSIGN_OR_RETURN(DataType dt, GetAttr<DataType>(attrs, "dtype"));
        if (!v.IsInitialized()) {
          return absl::InvalidArgumentError("value is an empty tensor");
        }
        if (v.dtype() != dt) {
          return absl::InvalidArgumentError(
              absl::StrCat("value is ", DataTypeString(v.dtype()),
                           " but dtype is ", DataTypeString(dt)));
        }
        return std::vector<OutputInfo>{{dt, v.shape()}};
      },
      [](OpKernelContext& ctx) -> absl::Status {
        GG_ASSIGN_OR_RETURN(Tensor v, GetAttr<Tensor>(ctx.attrs(), "value"));
        ctx.set_output(0, std::move(v));
        return absl::OkStatus();
      });
  // The value is an attribute: a plan computes it once.
  constant.def.dispatch = OpDef::Dispatch::kConstant;
  MustRegister(r, std::move(constant));
  auto identity_kernel = [](OpKernelContext& ctx) -> absl::Status {
    ctx.set_output(0, ctx.input(0));
    return absl::OkStatus();
  };
  auto same_shape = [](const AttrMap& attrs, absl::Span<const InputInfo> in)
      -> absl::StatusOr<std::vector<OutputInfo>> {
    GG_RETURN_IF_ERROR(op_util::CheckInputsMatchT(attrs, in, kAllTypes));
    return Same(in[0]);
  };
  MustRegister(
      r,
      MakeOp("Identity", {"input"}, 1, {{"T", "type"}}, same_shape,
             identity_kernel,
             [](const GradContext& ctx)
                 -> absl::StatusOr<std::vector<std::optional<Output>>> {
               return std::vector<std::optional<Output>>{ctx.grad_outputs[0]};
             }));
  // StopGradient: an Identity that gradients do not pass.
  MustRegister(r, MakeOp("StopGradient", {"input"}, 1, {{"T", "type"}},
                         same_shape, identity_kernel));
  RegisteredOp no_op = MakeOp(
      "NoOp", {}, 0, {},
      [](const AttrMap&, absl::Span<const InputInfo>)
          -> absl::StatusOr<std::vector<OutputInfo>> {
        return std::vector<OutputInfo>{};
      },
      [](OpKernelContext&) { return absl::OkStatus(); });
  // Only its control inputs matter: a plan skips it.
  no_op.def.dispatch = OpDef::Dispatch::kNothing;
  MustRegister(r, std::move(no_op));
}

}  // namespace

// --- Reshape ---

absl::StatusOr<TensorShape> ResolveReshape(const TensorShape& target, int64_t n,
                                           bool at_runtime) {
  int unknown = -1;
  for (int i = 0; i < target.dims(); ++i) {
    if (target[i] == -1) {
      if (unknown >= 0 && at_runtime) {
        return absl::InvalidArgumentError(absl::StrCat(
            "shape ", target.DebugString(), " has more than one -1"));
      }
      unknown = i;
    } else if (target[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape ", target.DebugString(), " has a negative dimension"));
    }
  }
  GG_RETURN_IF_ERROR(
      TensorShape::Validate(target.dim_sizes(), /*allow_unknown=*/true));
  TensorShape known_dims;
  for (int64_t d : target.dim_sizes()) {
    if (d >= 0) known_dims.AddDim(d);
  }
  GG_ASSIGN_OR_RETURN(const int64_t known, known_dims.CheckedNumElements());
  TensorShape out = target;
  if (n < 0) return out;
  bool single_unknown = true;
  for (int i = 0; i < target.dims(); ++i) {
    if (target[i] == -1 && i != unknown) single_unknown = false;
  }
  if (unknown >= 0 && single_unknown) {
    if (known == 0 || n % known != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot reshape ", n, " elements to ", target.DebugString()));
    }
    out.set_dim(unknown, n / known);
  } else if (unknown < 0 && known != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot reshape a tensor of ", n, " elements to shape ",
                     target.DebugString(), " (", known, " elements)"));
  }
  return out;
}

namespace {

absl::StatusOr<std::vector<OutputInfo>> ReshapeShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
  if (in[0].dtype != t) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor is ", DataTypeString(in[0].dtype), ", T is ",
                     DataTypeString(t)));
  }
  GG_RETURN_IF_ERROR(CheckDtype(in[1].dtype, kIndexTypes, "shape"));
  if (in[1].shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape must be a vector, got shape ", in[1].shape.DebugString()));
  }
  std::optional<TensorShape> target = KnownShapeValue(in[1]);
  if (!target.has_value()) {
    if (in[1].shape[0] < 0) {
      return absl::InvalidArgumentError(
          "the length of the shape input must be known when the graph is "
          "built");
    }
    return std::vector<OutputInfo>{
        {t, TensorShape(std::vector<int64_t>(in[1].shape[0], -1))}};
  }
  GG_ASSIGN_OR_RETURN(TensorShape out,
                      ResolveReshape(*target, in[0].shape.num_elements(),
                                     in[1].value.has_value()));
  return std::vector<OutputInfo>{{t, out}};
}

absl::Status ReshapeKernel(OpKernelContext& ctx) {
  absl::StatusOr<std::vector<int64_t>> dims = IntValues(ctx.input(1));
  if (!dims.ok()) return ctx.InvalidArgument(dims.status().message());
  absl::StatusOr<TensorShape> shape =
      ResolveReshape(TensorShape(*dims), ctx.input(0).num_elements(), true);
  if (!shape.ok()) return ctx.InvalidArgument(shape.status().message());
  absl::StatusOr<Tensor> out = ctx.input(0).Reshaped(*shape);
  if (!out.ok()) return ctx.InvalidArgument(out.status().message());
  ctx.set_output(0, *std::move(out));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::optional<Output>>> ReshapeGrad(
    const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) {
    return std::vector<std::optional<Output>>{std::nullopt, std::nullopt};
  }
  const Output& x = ctx.node.inputs[0];
  int unknown = 0;
  for (int64_t d : x.shape().dim_sizes()) unknown += d < 0;
  Output g;
  if (unknown <= 1) {
    GG_ASSIGN_OR_RETURN(g, ops::Reshape(*ctx.grad_outputs[0], x.shape(),
                                        {.name = GradName(ctx, "Reshape")}));
  } else {
    GG_ASSIGN_OR_RETURN(Output s,
                        ops::Shape(x, {.name = GradName(ctx, "Shape")}));
    GG_ASSIGN_OR_RETURN(g, ops::Reshape(*ctx.grad_outputs[0], s,
                                        {.name = GradName(ctx, "Reshape")}));
  }
  return std::vector<std::optional<Output>>{g, std::nullopt};
}

// --- Shape, Size ---

// Marks an op whose outputs depend only on its inputs' shapes and dtypes
// (OpDef::shape_only).
RegisteredOp ShapeOnly(RegisteredOp op) {
  op.def.shape_only = true;
  return op;
}

void RegisterShapeOps(OpRegistry& r) {
  MustRegister(
      r, ShapeOnly(MakeOp(
             "Shape", {"input"}, 1,
             {{"T", "type"}, {"out_type", "type", AttrValue(DT_INT32)}},
             [](const AttrMap& attrs, absl::Span<const InputInfo> in)
                 -> absl::StatusOr<std::vector<OutputInfo>> {
               GG_ASSIGN_OR_RETURN(DataType ot,
                                   GetAttr<DataType>(attrs, "out_type"));
               GG_RETURN_IF_ERROR(CheckDtype(ot, kIndexTypes, "out_type"));
               return std::vector<OutputInfo>{
                   {ot, TensorShape{in[0].shape.dims()}}};
             },
             [](const AttrMap& attrs) -> KernelFn {
               const bool wide =
                   GetAttrOr<DataType>(attrs, "out_type", DT_INT32) == DT_INT64;
               return [wide](OpKernelContext& ctx) {
                 absl::Span<const int64_t> dims =
                     ctx.input(0).shape().dim_sizes();
                 GG_ASSIGN_OR_RETURN(
                     Tensor shape, wide ? op_util::VectorTensor<int64_t>(dims)
                                        : op_util::VectorTensor<int32_t>(dims));
                 ctx.set_output(0, std::move(shape));
                 return absl::OkStatus();
               };
             })));
  MustRegister(
      r, ShapeOnly(MakeOp(
             "Size", {"input"}, 1,
             {{"T", "type"}, {"out_type", "type", AttrValue(DT_INT32)}},
             [](const AttrMap& attrs, absl::Span<const InputInfo>)
                 -> absl::StatusOr<std::vector<OutputInfo>> {
               GG_ASSIGN_OR_RETURN(DataType ot,
                                   GetAttr<DataType>(attrs, "out_type"));
               GG_RETURN_IF_ERROR(CheckDtype(ot, kIndexTypes, "out_type"));
               return std::vector<OutputInfo>{{ot, TensorShape{}}};
             },
             [](const AttrMap& attrs) -> KernelFn {
               const bool wide =
                   GetAttrOr<DataType>(attrs, "out_type", DT_INT32) == DT_INT64;
               return [wide](OpKernelContext& ctx) {
                 const int64_t n = ctx.input(0).num_elements();
                 ctx.set_output(0, wide ? Tensor::Scalar<int64_t>(n)
                                        : Tensor::Scalar<int32_t>(
                                              static_cast<int32_t>(n)));
                 return absl::OkStatus();
               };
             })));
}

// --- Fill, ZerosLike, OnesLike ---

template <typename T>
void FillWith(Tensor& t, T v) {
  for (T& x : t.mutable_data<T>()) x = v;
}

absl::Status FillKernel(OpKernelContext& ctx) {
  absl::StatusOr<std::vector<int64_t>> dims = IntValues(ctx.input(0));
  if (!dims.ok()) return ctx.InvalidArgument(dims.status().message());
  if (ctx.input(1).num_elements() != 1) {
    return ctx.InvalidArgument(
        absl::StrCat("value must be a scalar, got shape ",
                     ctx.input(1).shape().DebugString()));
  }
  GG_ASSIGN_OR_RETURN(Tensor out,
                      NewOutput(ctx, ctx.input(1).dtype(), TensorShape(*dims)));
  GG_RETURN_IF_ERROR(DispatchAll(ctx.input(1).dtype(), [&](auto tag) {
    using T = decltype(tag);
    FillWith<T>(out, ctx.input(1).data<T>()[0]);
    return absl::OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

template <int kValue>
absl::Status ConstantLikeKernel(OpKernelContext& ctx) {
  GG_ASSIGN_OR_RETURN(
      Tensor out, NewOutput(ctx, ctx.input(0).dtype(), ctx.input(0).shape()));
  GG_RETURN_IF_ERROR(DispatchAll(ctx.input(0).dtype(), [&](auto tag) {
    using T = decltype(tag);
    FillWith<T>(out, static_cast<T>(kValue));
    return absl::OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

void RegisterFillOps(OpRegistry& r) {
  MustRegister(
      r,
      MakeOp(
          "Fill", {"dims", "value"}, 1,
          {{"T", "type"}, {"index_type", "type", AttrValue(DT_INT32)}},
          [](const AttrMap& attrs, absl::Span<const InputInfo> in)
              -> absl::StatusOr<std::vector<OutputInfo>> {
            GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
            if (in[1].dtype != t) {
              return absl::InvalidArgumentError(
                  absl::StrCat("value is ", DataTypeString(in[1].dtype),
                               ", T is ", DataTypeString(t)));
            }
            GG_RETURN_IF_ERROR(CheckDtype(in[0].dtype, kIndexTypes, "dims"));
            if (in[0].shape.dims() != 1) {
              return absl::InvalidArgumentError("dims must be a vector");
            }
            if (in[1].shape.dims() != 0) {
              return absl::InvalidArgumentError(
                  absl::StrCat("value must be a scalar, got shape ",
                               in[1].shape.DebugString()));
            }
            std::optional<TensorShape> s = KnownShapeValue(in[0]);
            if (s.has_value()) return std::vector<OutputInfo>{{t, *s}};
            if (in[0].shape[0] < 0) {
              return absl::InvalidArgumentError(
                  "the length of dims must be known when the graph is built");
            }
            return std::vector<OutputInfo>{
                {t, TensorShape(std::vector<int64_t>(in[0].shape[0], -1))}};
          },
          FillKernel,
          [](const GradContext& ctx)
              -> absl::StatusOr<std::vector<std::optional<Output>>> {
            if (!ctx.grad_outputs[0].has_value()) {
              return std::vector<std::optional<Output>>{std::nullopt,
                                                        std::nullopt};
            }
            GG_ASSIGN_OR_RETURN(
                Output g,
                ops::Sum(*ctx.grad_outputs[0], {.name = GradName(ctx, "Sum")}));
            return std::vector<std::optional<Output>>{std::nullopt, g};
          }));
  auto same = [](const AttrMap& attrs, absl::Span<const InputInfo> in)
      -> absl::StatusOr<std::vector<OutputInfo>> {
    GG_RETURN_IF_ERROR(op_util::CheckInputsMatchT(attrs, in, kAllTypes));
    return Same(in[0]);
  };
  MustRegister(r, ShapeOnly(MakeOp("ZerosLike", {"x"}, 1, {{"T", "type"}}, same,
                                   ConstantLikeKernel<0>)));
  MustRegister(r, ShapeOnly(MakeOp("OnesLike", {"x"}, 1, {{"T", "type"}}, same,
                                   ConstantLikeKernel<1>)));
}

// --- Cast ---

// `f` converted to the integer type D: truncated toward zero, clamped to
// D's range, NaN to 0.
template <typename D, typename S>
D SaturatingCast(S f) {
  // 2^(bits-1) exactly, as S: D's max + 1, D's min negated.
  constexpr S kLimit = -static_cast<S>(std::numeric_limits<D>::min());
  if (std::isnan(f)) return 0;
  if (f >= kLimit) return std::numeric_limits<D>::max();
  if (f <= -kLimit) return std::numeric_limits<D>::min();
  return static_cast<D>(f);
}

absl::Status CastKernel(OpKernelContext& ctx, DataType dst) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() == dst) {
    ctx.set_output(0, x);
    return absl::OkStatus();
  }
  GG_ASSIGN_OR_RETURN(Tensor out, NewOutput(ctx, dst, x.shape()));
  GG_RETURN_IF_ERROR(DispatchAll(x.dtype(), [&](auto src_tag) {
    using S = decltype(src_tag);
    return DispatchAll(dst, [&](auto dst_tag) {
      using D = decltype(dst_tag);
      if constexpr (std::is_same_v<D, bool>) {
        out.mutable_flat<D>() = x.flat<S>() != S(0);
      } else if constexpr (std::is_floating_point_v<S> &&
                           std::is_integral_v<D>) {
        // A float outside D's range (or NaN) converted to D is undefined
        // behaviour; saturate instead, NaN to 0, as XLA defines it.
        const auto in = x.data<S>();
        auto o = out.mutable_data<D>();
        for (size_t i = 0; i < in.size(); ++i) o[i] = SaturatingCast<D>(in[i]);
      } else {
        out.mutable_flat<D>() = x.flat<S>().template cast<D>();
      }
      return absl::OkStatus();
    });
  }));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

KernelFn BindCast(const AttrMap& attrs) {
  absl::StatusOr<DataType> dst = GetAttr<DataType>(attrs, "DstT");
  if (!dst.ok()) {
    return [status = dst.status()](OpKernelContext&) { return status; };
  }
  return [dst = *dst](OpKernelContext& ctx) { return CastKernel(ctx, dst); };
}

absl::StatusOr<std::vector<std::optional<Output>>> CastGrad(
    const GradContext& ctx) {
  const DataType src = GetAttrOr<DataType>(ctx.node.attrs, "SrcT", DT_INVALID);
  const DataType dst = GetAttrOr<DataType>(ctx.node.attrs, "DstT", DT_INVALID);
  if (!ctx.grad_outputs[0].has_value() || src != DT_FLOAT || dst != DT_FLOAT) {
    return std::vector<std::optional<Output>>{std::nullopt};
  }
  return std::vector<std::optional<Output>>{ctx.grad_outputs[0]};
}

// --- Transpose ---

absl::StatusOr<std::vector<int>> CheckPerm(absl::Span<const int64_t> perm,
                                           int rank) {
  if (static_cast<int>(perm.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "perm has ", perm.size(), " entries for a tensor of rank ", rank));
  }
  std::vector<int> p(rank);
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]]) {
      return absl::InvalidArgumentError(
          absl::StrCat("perm is not a permutation of 0..", rank - 1));
    }
    seen[perm[i]] = true;
    p[i] = static_cast<int>(perm[i]);
  }
  return p;
}

absl::Status TransposeKernel(OpKernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<std::vector<int64_t>> pv = IntValues(ctx.input(1));
  if (!pv.ok()) return ctx.InvalidArgument(pv.status().message());
  absl::StatusOr<std::vector<int>> perm = CheckPerm(*pv, x.shape().dims());
  if (!perm.ok()) return ctx.InvalidArgument(perm.status().message());
  const int r = x.shape().dims();
  std::vector<int64_t> out_dims(r);
  std::vector<int64_t> in_strides(r);
  int64_t s = 1;
  for (int d = r - 1; d >= 0; --d) {
    in_strides[d] = s;
    s *= x.shape()[d];
  }
  for (int i = 0; i < r; ++i) out_dims[i] = x.shape()[(*perm)[i]];
  GG_ASSIGN_OR_RETURN(Tensor out,
                      NewOutput(ctx, x.dtype(), TensorShape(out_dims)));
  GG_RETURN_IF_ERROR(DispatchAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>().data();
    T* dst = out.mutable_data<T>().data();
    const int64_t n = out.num_elements();
    std::vector<int64_t> idx(r, 0);
    int64_t off = 0;
    for (int64_t i = 0; i < n; ++i) {
      dst[i] = src[off];
      for (int d = r - 1; d >= 0; --d) {
        const int64_t stride = in_strides[(*perm)[d]];
        ++idx[d];
        off += stride;
        if (idx[d] < out_dims[d]) break;
        off -= stride * idx[d];
        idx[d] = 0;
      }
    }
    return absl::OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OutputInfo>> TransposeShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
  GG_RETURN_IF_ERROR(CheckDtype(in[1].dtype, kIndexTypes, "perm"));
  const int r = in[0].shape.dims();
  if (!in[1].value.has_value()) {
    return std::vector<OutputInfo>{
        {t, TensorShape(std::vector<int64_t>(r, -1))}};
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> pv, IntValues(*in[1].value));
  GG_ASSIGN_OR_RETURN(std::vector<int> perm, CheckPerm(pv, r));
  std::vector<int64_t> out(r);
  for (int i = 0; i < r; ++i) out[i] = in[0].shape[perm[i]];
  return std::vector<OutputInfo>{{t, TensorShape(out)}};
}

absl::StatusOr<std::vector<std::optional<Output>>> TransposeGrad(
    const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) {
    return std::vector<std::optional<Output>>{std::nullopt, std::nullopt};
  }
  std::optional<Tensor> p = op_util::ConstValueOf(ctx.node.inputs[1]);
  if (!p.has_value()) {
    return absl::UnimplementedError(absl::StrCat(
        "Transpose '", ctx.node.name, "': gradient needs a constant perm"));
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> perm, IntValues(*p));
  std::vector<int32_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    inverse[perm[i]] = static_cast<int32_t>(i);
  }
  GG_ASSIGN_OR_RETURN(Output g,
                      ops::Transpose(*ctx.grad_outputs[0], inverse,
                                     {.name = GradName(ctx, "Transpose")}));
  return std::vector<std::optional<Output>>{g, std::nullopt};
}

// --- BroadcastGradientArgs ---

// TensorFlow's rule: for each output axis, the inputs whose (right-aligned)
// dimension is 1 or missing while the output's is not 1... reduced there.
absl::Status BroadcastGradientArgsKernel(OpKernelContext& ctx) {
  absl::StatusOr<std::vector<int64_t>> a = IntValues(ctx.input(0));
  absl::StatusOr<std::vector<int64_t>> b = IntValues(ctx.input(1));
  if (!a.ok()) return ctx.InvalidArgument(a.status().message());
  if (!b.ok()) return ctx.InvalidArgument(b.status().message());
  absl::StatusOr<TensorShape> out =
      op_util::BroadcastShapes(TensorShape(*a), TensorShape(*b));
  if (!out.ok()) return ctx.InvalidArgument(out.status().message());
  const int r = out->dims();
  std::vector<int32_t> r0, r1;
  for (int i = 0; i < r; ++i) {
    const int ia = i - (r - static_cast<int>(a->size()));
    const int ib = i - (r - static_cast<int>(b->size()));
    const int64_t da = ia >= 0 ? (*a)[ia] : -1;  // -1: missing
    const int64_t db = ib >= 0 ? (*b)[ib] : -1;
    if (da == -1 || (da == 1 && (*out)[i] != 1)) r0.push_back(i);
    if (db == -1 || (db == 1 && (*out)[i] != 1)) r1.push_back(i);
  }
  GG_ASSIGN_OR_RETURN(
      Tensor t0, op_util::VectorTensor<int32_t>(absl::Span<const int32_t>(r0)));
  GG_ASSIGN_OR_RETURN(
      Tensor t1, op_util::VectorTensor<int32_t>(absl::Span<const int32_t>(r1)));
  ctx.set_output(0, std::move(t0));
  ctx.set_output(1, std::move(t1));
  return absl::OkStatus();
}

}  // namespace

void RegisterArrayOps(OpRegistry& r) {
  RegisterLeaves(r);
  MustRegister(r,
               MakeOp("Reshape", {"tensor", "shape"}, 1,
                      {{"T", "type"}, {"Tshape", "type", AttrValue(DT_INT32)}},
                      ReshapeShape, ReshapeKernel, ReshapeGrad));
  RegisterShapeOps(r);
  RegisterFillOps(r);
  MustRegister(r, MakeOp(
                      "Cast", {"x"}, 1,
                      {{"SrcT", "type"},
                       {"DstT", "type"},
                       {"Truncate", "bool", AttrValue(false)}},
                      [](const AttrMap& attrs, absl::Span<const InputInfo> in)
                          -> absl::StatusOr<std::vector<OutputInfo>> {
                        GG_ASSIGN_OR_RETURN(DataType src,
                                            GetAttr<DataType>(attrs, "SrcT"));
                        GG_ASSIGN_OR_RETURN(DataType dst,
                                            GetAttr<DataType>(attrs, "DstT"));
                        if (in[0].dtype != src) {
                          return absl::InvalidArgumentError(
                              absl::StrCat("x is ", DataTypeString(in[0].dtype),
                                           ", SrcT is ", DataTypeString(src)));
                        }
                        GG_RETURN_IF_ERROR(CheckDtype(src, kAllTypes, "SrcT"));
                        GG_RETURN_IF_ERROR(CheckDtype(dst, kAllTypes, "DstT"));
                        return std::vector<OutputInfo>{{dst, in[0].shape}};
                      },
                      BindCast, CastGrad));
  MustRegister(r,
               MakeOp("Transpose", {"x", "perm"}, 1,
                      {{"T", "type"}, {"Tperm", "type", AttrValue(DT_INT32)}},
                      TransposeShape, TransposeKernel, TransposeGrad));
  MustRegister(r, MakeOp(
                      "BroadcastGradientArgs", {"s0", "s1"}, 2,
                      {{"T", "type", AttrValue(DT_INT32)}},
                      [](const AttrMap& attrs, absl::Span<const InputInfo> in)
                          -> absl::StatusOr<std::vector<OutputInfo>> {
                        GG_RETURN_IF_ERROR(
                            op_util::CheckInputsMatchT(attrs, in, {DT_INT32}));
                        return std::vector<OutputInfo>{
                            {DT_INT32, TensorShape{-1}},
                            {DT_INT32, TensorShape{-1}}};
                      },
                      BroadcastGradientArgsKernel));
}

}  // namespace graphgc
