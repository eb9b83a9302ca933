// ConcatV2, Slice and Pad (ops/concat_ops.h). Shape functions and kernels share
// one check of the shapes each, so a graph refused at build time and a feed
// refused at run time get the same message (TensorFlow's, "ConcatOp : ...").
#include "ops/concat_ops.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/op_util.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using op_util::CheckDtype;
using op_util::DispatchAll;
using op_util::GradName;
using op_util::IntValues;
using op_util::MakeOp;
using op_util::MustRegister;

using Grads = std::vector<std::optional<Output>>;

constexpr std::initializer_list<DataType> kAllTypes = {DT_FLOAT, DT_INT32,
                                                       DT_INT64, DT_BOOL};
constexpr std::initializer_list<DataType> kIndexTypes = {DT_INT32, DT_INT64};

// --- ConcatV2 ---

// `axis` in [-rank, rank) as an index.
absl::StatusOr<int> ConcatAxis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConcatOp : Expected concatenating dimensions in the "
                     "range [",
                     -rank, ", ", rank, "), but got ", axis));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// The joined shape of `shapes` along `axis` (dimensions may be -1, unknown:
// an unknown one agrees with any other, and an unknown size on the axis
// makes the joined size unknown). `axis` nullopt: unknown, every dimension
// of the result is.
absl::StatusOr<TensorShape> ConcatShape(absl::Span<const TensorShape> shapes,
                                        std::optional<int64_t> axis) {
  const int rank = shapes[0].dims();
  if (rank == 0) {
    return absl::InvalidArgumentError(
        "ConcatOp : Can't concatenate scalars (use Pack instead)");
  }
  for (size_t i = 1; i < shapes.size(); ++i) {
    if (shapes[i].dims() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConcatOp : Ranks of all input tensors should match: shape[0] = ",
          shapes[0].DebugString(), " vs. shape[", i,
          "] = ", shapes[i].DebugString()));
    }
  }
  if (!axis.has_value()) {
    return TensorShape(std::vector<int64_t>(rank, -1));
  }
  GG_ASSIGN_OR_RETURN(const int a, ConcatAxis(*axis, rank));
  TensorShape out = shapes[0];
  for (size_t i = 1; i < shapes.size(); ++i) {
    for (int d = 0; d < rank; ++d) {
      const int64_t have = out[d];
      const int64_t next = shapes[i][d];
      if (d == a) {
        int64_t sum = -1;
        if (have >= 0 && next >= 0 &&
            __builtin_add_overflow(have, next, &sum)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "ConcatOp : the joined dimension ", d,
              " of shape[0] = ", shapes[0].DebugString(), " and shape[", i,
              "] = ", shapes[i].DebugString(), " overflows int64"));
        }
        out.set_dim(d, have >= 0 && next >= 0 ? sum : -1);
      } else if (have < 0) {
        out.set_dim(d, next);
      } else if (next >= 0 && next != have) {
        return absl::InvalidArgumentError(
            absl::StrCat("ConcatOp : Dimension ", d,
                         " in both shapes must be equal: shape[0] = ",
                         shapes[0].DebugString(), " vs. shape[", i,
                         "] = ", shapes[i].DebugString()));
      }
    }
  }
  GG_RETURN_IF_ERROR(TensorShape::Validate(out.dim_sizes(), true));
  return out;
}

// The axis input's value: a scalar int32/int64.
absl::StatusOr<int64_t> ScalarAxis(const Tensor& t) {
  if (t.shape().dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConcatOp : axis must be a scalar, got shape ",
                     t.shape().DebugString()));
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> v, IntValues(t));
  return v[0];
}

absl::StatusOr<std::vector<OutputInfo>> ConcatV2ShapeFn(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(const int64_t n, GetAttr<int64_t>(attrs, "N"));
  GG_ASSIGN_OR_RETURN(const DataType t, GetAttr<DataType>(attrs, "T"));
  GG_ASSIGN_OR_RETURN(const DataType tidx, GetAttr<DataType>(attrs, "Tidx"));
  if (n < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("N must be at least 2, got ", n));
  }
  GG_RETURN_IF_ERROR(CheckDtype(t, kAllTypes, "T"));
  GG_RETURN_IF_ERROR(CheckDtype(tidx, kIndexTypes, "Tidx"));
  const InputInfo& axis = in.back();
  if (axis.dtype != tidx) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis is ", DataTypeString(axis.dtype), ", Tidx is ",
                     DataTypeString(tidx)));
  }
  if (axis.shape.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "axis must be a scalar, got shape ", axis.shape.DebugString()));
  }
  std::vector<TensorShape> shapes;
  for (int64_t i = 0; i < n; ++i) {
    if (in[i].dtype != t) {
      return absl::InvalidArgumentError(
          absl::StrCat("values_", i, " is ", DataTypeString(in[i].dtype),
                       ", T is ", DataTypeString(t)));
    }
    shapes.push_back(in[i].shape);
  }
  std::optional<int64_t> a;
  if (axis.value.has_value()) {
    GG_ASSIGN_OR_RETURN(a, ScalarAxis(*axis.value));
  }
  GG_ASSIGN_OR_RETURN(TensorShape out, ConcatShape(shapes, a));
  return std::vector<OutputInfo>{{t, out}};
}

template <typename T>
void ConcatCopy(absl::Span<const Tensor* const> values, int axis, Tensor& out) {
  // Each input is `outer` rows of `inner_i` elements; output row r is every
  // input's row r in turn.
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= out.shape()[d];
  T* dst = out.mutable_data<T>().data();
  std::vector<int64_t> inner(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    inner[i] = outer == 0 ? 0 : values[i]->num_elements() / outer;
  }
  for (int64_t r = 0; r < outer; ++r) {
    for (size_t i = 0; i < values.size(); ++i) {
      const T* src = values[i]->data<T>().data() + r * inner[i];
      std::copy(src, src + inner[i], dst);
      dst += inner[i];
    }
  }
}

absl::Status ConcatV2Kernel(OpKernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  absl::StatusOr<int64_t> axis = ScalarAxis(ctx.input(n));
  if (!axis.ok()) return ctx.InvalidArgument(axis.status().message());
  std::vector<TensorShape> shapes;
  std::vector<const Tensor*> values;
  for (int i = 0; i < n; ++i) {
    shapes.push_back(ctx.input(i).shape());
    values.push_back(&ctx.input(i));
  }
  absl::StatusOr<TensorShape> shape = ConcatShape(shapes, *axis);
  if (!shape.ok()) return ctx.InvalidArgument(shape.status().message());
  const int a = static_cast<int>(*axis < 0 ? *axis + shape->dims() : *axis);
  const DataType dt = ctx.input(0).dtype();
  GG_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dt, *shape));
  return DispatchAll(dt, [&](auto tag) {
    ConcatCopy<decltype(tag)>(values, a, *out);
    return absl::OkStatus();
  });
}

// TensorFlow's _ConcatGradV2: the upstream gradient sliced back at each
// input's offset along the axis. Needs the axis and the inputs' sizes
// along it when the graph is built.
absl::StatusOr<Grads> ConcatV2Grad(const GradContext& ctx) {
  const int n = static_cast<int>(ctx.node.inputs.size()) - 1;
  Grads grads(n + 1, std::nullopt);
  if (!ctx.grad_outputs[0].has_value()) return grads;
  const auto unsupported = [&](absl::string_view why) {
    return absl::UnimplementedError(
        absl::StrCat("ConcatV2 '", ctx.node.name, "': gradient needs ", why));
  };
  std::optional<Tensor> axis_value = op_util::ConstValueOf(ctx.node.inputs[n]);
  if (!axis_value.has_value()) return unsupported("a constant axis");
  GG_ASSIGN_OR_RETURN(const int64_t axis, ScalarAxis(*axis_value));
  const int rank = ctx.node.inputs[0].shape().dims();
  GG_ASSIGN_OR_RETURN(const int a, ConcatAxis(axis, rank));
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t width = ctx.node.inputs[i].shape()[a];
    if (width < 0) {
      return unsupported("every input's size along the axis");
    }
    std::vector<int64_t> begin(rank, 0);
    std::vector<int64_t> size(rank, -1);
    begin[a] = offset;
    size[a] = width;
    GG_ASSIGN_OR_RETURN(grads[i], ops::Slice(*ctx.grad_outputs[0], begin, size,
                                             {.name = GradName(ctx, "Slice")}));
    // The output's size along the axis is the sum: no overflow.
    offset += width;
  }
  return grads;
}

// --- Slice ---

// The [begin, begin + size) range of each axis of `shape`, size -1
// resolved to the end; dimensions of `shape` may be -1 (unknown), their
// ranges then unchecked and the result's size there -1 unless given.
absl::StatusOr<TensorShape> SliceShape(const TensorShape& shape,
                                       absl::Span<const int64_t> begin,
                                       absl::Span<const int64_t> size) {
  const int rank = shape.dims();
  if (static_cast<int>(begin.size()) != rank ||
      static_cast<int>(size.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected begin and size arguments to be 1-D tensors of size ", rank,
        ", but got shapes [", begin.size(), "] and [", size.size(),
        "] instead."));
  }
  std::vector<int64_t> out(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t dim = shape[i];
    if (begin[i] < 0 || (dim >= 0 && begin[i] > dim)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected begin[", i, "] in [0, ", dim, "], but got ", begin[i]));
    }
    if (size[i] == -1) {
      out[i] = dim < 0 ? -1 : dim - begin[i];
      continue;
    }
    int64_t end = 0;
    if (size[i] < 0 || __builtin_add_overflow(begin[i], size[i], &end) ||
        (dim >= 0 && end > dim)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected size[", i, "] in [0, ",
                       dim < 0 ? dim : dim - begin[i], "], but got ", size[i]));
    }
    out[i] = size[i];
  }
  return TensorShape(out);
}

absl::StatusOr<std::vector<OutputInfo>> SliceShapeFn(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(const DataType t, GetAttr<DataType>(attrs, "T"));
  GG_ASSIGN_OR_RETURN(const DataType index, GetAttr<DataType>(attrs, "Index"));
  GG_RETURN_IF_ERROR(CheckDtype(t, kAllTypes, "T"));
  GG_RETURN_IF_ERROR(CheckDtype(index, kIndexTypes, "Index"));
  if (in[0].dtype != t) {
    return absl::InvalidArgumentError(
        absl::StrCat("input is ", DataTypeString(in[0].dtype), ", T is ",
                     DataTypeString(t)));
  }
  for (int k = 1; k <= 2; ++k) {
    const char* what = k == 1 ? "begin" : "size";
    if (in[k].dtype != index) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is ", DataTypeString(in[k].dtype), ", Index is ",
                       DataTypeString(index)));
    }
    if (in[k].shape.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " must be a vector, got shape ", in[k].shape.DebugString()));
    }
  }
  const int rank = in[0].shape.dims();
  if (!in[1].value.has_value() || !in[2].value.has_value()) {
    return std::vector<OutputInfo>{
        {t, TensorShape(std::vector<int64_t>(rank, -1))}};
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> begin, IntValues(*in[1].value));
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> size, IntValues(*in[2].value));
  GG_ASSIGN_OR_RETURN(TensorShape out, SliceShape(in[0].shape, begin, size));
  return std::vector<OutputInfo>{{t, out}};
}

// Row-major strides of `shape`.
std::vector<int64_t> Strides(const TensorShape& shape) {
  const int rank = shape.dims();
  std::vector<int64_t> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape[d + 1];
  return stride;
}

// Copies a `block` of elements from `src` (of shape `src_shape`, starting
// at `src_at`) to `dst` (of shape `dst_shape`, starting at `dst_at`): what
// Slice and Pad do, one the other's inverse.
template <typename T>
void BlockCopy(const Tensor& src, absl::Span<const int64_t> src_at, Tensor& dst,
               absl::Span<const int64_t> dst_at, const TensorShape& block) {
  const int rank = block.dims();
  const int64_t n = block.num_elements();
  if (n == 0) return;
  const std::vector<int64_t> ss = Strides(src.shape());
  const std::vector<int64_t> ds = Strides(dst.shape());
  int64_t so = 0, doff = 0;
  for (int d = 0; d < rank; ++d) {
    so += src_at[d] * ss[d];
    doff += dst_at[d] * ds[d];
  }
  const T* from = src.data<T>().data();
  T* to = dst.mutable_data<T>().data();
  if (rank == 0) {
    to[doff] = from[so];
    return;
  }
  // The innermost axis is contiguous in both tensors: copy it a run at a
  // time, stepping the outer axes as an odometer between runs.
  const int inner = rank - 1;
  const int64_t run = block[inner];
  std::vector<int64_t> idx(inner, 0);
  for (int64_t copied = 0; copied < n; copied += run) {
    std::copy_n(from + so, run, to + doff);
    for (int d = inner - 1; d >= 0; --d) {
      ++idx[d];
      so += ss[d];
      doff += ds[d];
      if (idx[d] < block[d]) break;
      so -= ss[d] * idx[d];
      doff -= ds[d] * idx[d];
      idx[d] = 0;
    }
  }
}

absl::Status SliceKernel(OpKernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<std::vector<int64_t>> begin = IntValues(ctx.input(1));
  if (!begin.ok()) return ctx.InvalidArgument(begin.status().message());
  absl::StatusOr<std::vector<int64_t>> size = IntValues(ctx.input(2));
  if (!size.ok()) return ctx.InvalidArgument(size.status().message());
  absl::StatusOr<TensorShape> shape = SliceShape(x.shape(), *begin, *size);
  if (!shape.ok()) return ctx.InvalidArgument(shape.status().message());
  GG_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x.dtype(), *shape));
  const std::vector<int64_t> origin(x.shape().dims(), 0);
  return DispatchAll(x.dtype(), [&](auto tag) {
    BlockCopy<decltype(tag)>(x, *begin, *out, origin, *shape);
    return absl::OkStatus();
  });
}

// TensorFlow's _SliceGrad: the upstream gradient padded back to the input's
// shape. Needs constant begin and size, and the input's size on every axis
// but those sliced from 0 to the end.
absl::StatusOr<Grads> SliceGrad(const GradContext& ctx) {
  Grads grads(3, std::nullopt);
  if (!ctx.grad_outputs[0].has_value()) return grads;
  const auto unsupported = [&](absl::string_view why) {
    return absl::UnimplementedError(
        absl::StrCat("Slice '", ctx.node.name, "': gradient needs ", why));
  };
  std::optional<Tensor> b = op_util::ConstValueOf(ctx.node.inputs[1]);
  std::optional<Tensor> z = op_util::ConstValueOf(ctx.node.inputs[2]);
  if (!b.has_value() || !z.has_value()) {
    return unsupported("a constant begin and size");
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> begin, IntValues(*b));
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> size, IntValues(*z));
  const TensorShape& in = ctx.node.inputs[0].shape();
  GG_ASSIGN_OR_RETURN(TensorShape out, SliceShape(in, begin, size));
  std::vector<int64_t> paddings;
  for (int d = 0; d < in.dims(); ++d) {
    int64_t after = 0;
    if (in[d] >= 0) {
      after = in[d] - begin[d] - out[d];  // SliceShape checked the range
    } else if (begin[d] != 0 || size[d] != -1) {
      return unsupported("the input's size on each axis it slices");
    }
    paddings.push_back(begin[d]);
    paddings.push_back(after);
  }
  GG_ASSIGN_OR_RETURN(grads[0], ops::Pad(*ctx.grad_outputs[0], paddings,
                                         {.name = GradName(ctx, "Pad")}));
  return grads;
}

// --- Pad ---

// The padded shape of `shape` (dims may be -1: -1 stays) by `paddings`
// ([rank, 2] values, before and after per axis, each >= 0), TensorFlow's
// messages.
absl::StatusOr<TensorShape> PadShape(const TensorShape& shape,
                                     absl::Span<const int64_t> paddings) {
  const int rank = shape.dims();
  if (static_cast<int>(paddings.size()) != 2 * rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("The first dimension of paddings must be the rank of "
                     "inputs ",
                     rank, ", got ", paddings.size() / 2, " pairs"));
  }
  std::vector<int64_t> out(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t before = paddings[2 * d], after = paddings[2 * d + 1];
    if (before < 0 || after < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Paddings must be non-negative: ", before, " ", after));
    }
    if (shape[d] < 0) {
      out[d] = -1;
      continue;
    }
    if (__builtin_add_overflow(shape[d], before, &out[d]) ||
        __builtin_add_overflow(out[d], after, &out[d])) {
      return absl::InvalidArgumentError(
          absl::StrCat("padded dimension ", d, " overflows int64 (", shape[d],
                       " + ", before, " + ", after, ")"));
    }
  }
  return TensorShape(out);
}

absl::StatusOr<std::vector<OutputInfo>> PadShapeFn(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(const DataType t, GetAttr<DataType>(attrs, "T"));
  GG_ASSIGN_OR_RETURN(const DataType index,
                      GetAttr<DataType>(attrs, "Tpaddings"));
  GG_RETURN_IF_ERROR(CheckDtype(t, kAllTypes, "T"));
  GG_RETURN_IF_ERROR(CheckDtype(index, kIndexTypes, "Tpaddings"));
  if (in[0].dtype != t || in[1].dtype != index) {
    return absl::InvalidArgumentError(
        absl::StrCat("input is ", DataTypeString(in[0].dtype), " and paddings ",
                     DataTypeString(in[1].dtype), ", T is ", DataTypeString(t),
                     " and Tpaddings ", DataTypeString(index)));
  }
  const int rank = in[0].shape.dims();
  const TensorShape& p = in[1].shape;
  if (p.dims() != 2 || (p[1] >= 0 && p[1] != 2) ||
      (p[0] >= 0 && p[0] != rank)) {
    return absl::InvalidArgumentError(
        absl::StrCat("paddings must be a matrix [", rank,
                     ", 2] (the input's rank), got shape ", p.DebugString()));
  }
  if (!in[1].value.has_value()) {
    return std::vector<OutputInfo>{
        {t, TensorShape(std::vector<int64_t>(rank, -1))}};
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> paddings, IntValues(*in[1].value));
  GG_ASSIGN_OR_RETURN(TensorShape out, PadShape(in[0].shape, paddings));
  return std::vector<OutputInfo>{{t, out}};
}

absl::Status PadKernel(OpKernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& p = ctx.input(1);
  const int rank = x.shape().dims();
  if (p.shape().dims() != 2 || p.shape()[0] != rank || p.shape()[1] != 2) {
    return ctx.InvalidArgument(absl::StrCat("paddings must be a matrix [", rank,
                                            ", 2], got shape ",
                                            p.shape().DebugString()));
  }
  absl::StatusOr<std::vector<int64_t>> paddings = IntValues(p);
  if (!paddings.ok()) return ctx.InvalidArgument(paddings.status().message());
  absl::StatusOr<TensorShape> shape = PadShape(x.shape(), *paddings);
  if (!shape.ok()) return ctx.InvalidArgument(shape.status().message());
  // A fresh output is zeros: only the input's block is copied.
  GG_ASSIGN_OR_RETURN(Tensor out, op_util::NewOutput(ctx, x.dtype(), *shape));
  std::vector<int64_t> before(rank), origin(rank, 0);
  for (int d = 0; d < rank; ++d) before[d] = (*paddings)[2 * d];
  GG_RETURN_IF_ERROR(DispatchAll(x.dtype(), [&](auto tag) {
    BlockCopy<decltype(tag)>(x, origin, out, before, x.shape());
    return absl::OkStatus();
  }));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// TensorFlow's _PadGrad: the upstream gradient sliced back at the padding
// before each axis, the input's size (to the end where it is unknown and
// nothing comes after). Needs constant paddings.
absl::StatusOr<Grads> PadGrad(const GradContext& ctx) {
  Grads grads(2, std::nullopt);
  if (!ctx.grad_outputs[0].has_value()) return grads;
  const auto unsupported = [&](absl::string_view why) {
    return absl::UnimplementedError(
        absl::StrCat("Pad '", ctx.node.name, "': gradient needs ", why));
  };
  std::optional<Tensor> p = op_util::ConstValueOf(ctx.node.inputs[1]);
  if (!p.has_value()) return unsupported("constant paddings");
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> paddings, IntValues(*p));
  const TensorShape& in = ctx.node.inputs[0].shape();
  GG_RETURN_IF_ERROR(PadShape(in, paddings).status());
  std::vector<int64_t> begin, size;
  for (int d = 0; d < in.dims(); ++d) {
    if (in[d] < 0 && paddings[2 * d + 1] != 0) {
      return unsupported("the input's size on each axis padded after");
    }
    begin.push_back(paddings[2 * d]);
    size.push_back(in[d]);  // -1: to the end
  }
  GG_ASSIGN_OR_RETURN(grads[0], ops::Slice(*ctx.grad_outputs[0], begin, size,
                                           {.name = GradName(ctx, "Slice")}));
  return grads;
}

// An int32 vector of `v`, or int64 when a value does not fit int32.
absl::StatusOr<Tensor> IndexVector(absl::Span<const int64_t> v) {
  for (int64_t x : v) {
    if (x < std::numeric_limits<int32_t>::min() ||
        x > std::numeric_limits<int32_t>::max()) {
      return op_util::VectorTensor<int64_t>(v);
    }
  }
  return op_util::VectorTensor<int32_t>(v);
}

}  // namespace

void RegisterConcatOps(OpRegistry& r) {
  RegisteredOp concat = MakeOp(
      "ConcatV2", {"values", "axis"}, 1,
      {{"N", "int"}, {"T", "type"}, {"Tidx", "type", AttrValue(DT_INT32)}},
      ConcatV2ShapeFn, ConcatV2Kernel, ConcatV2Grad);
  concat.variadic = true;
  concat.min_inputs = 3;  // N >= 2 values and the axis
  MustRegister(r, std::move(concat));
  MustRegister(r, MakeOp("Slice", {"input", "begin", "size"}, 1,
                         {{"T", "type"}, {"Index", "type"}}, SliceShapeFn,
                         SliceKernel, SliceGrad));
  MustRegister(
      r, MakeOp("Pad", {"input", "paddings"}, 1,
                {{"T", "type"}, {"Tpaddings", "type", AttrValue(DT_INT32)}},
                PadShapeFn, PadKernel, PadGrad));
}

namespace ops {

absl::StatusOr<Output> ConcatV2(absl::Span<const Output> values, int64_t axis,
                                OpOptions options) {
  const std::string name = options.name.empty() ? "ConcatV2" : options.name;
  if (values.empty() || !values[0].valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConcatV2 '", name, "': input 0 is an empty Output"));
  }
  std::vector<BuildInput> in(values.begin(), values.end());
  if (axis < std::numeric_limits<int32_t>::min() ||
      axis > std::numeric_limits<int32_t>::max()) {
    in.emplace_back(Tensor::Scalar<int64_t>(axis));
  } else {
    in.emplace_back(Tensor::Scalar<int32_t>(static_cast<int32_t>(axis)));
  }
  const DataType tidx = in.back().constant->dtype();
  GG_ASSIGN_OR_RETURN(
      NodeHandle h,
      BuildNode(*values[0].graph(), "ConcatV2", options.name, std::move(in),
                std::move(options.control_inputs), {{"Tidx", tidx}}));
  return Output(std::move(h), 0);
}

absl::StatusOr<Output> Slice(const Output& x, std::vector<int64_t> begin,
                             std::vector<int64_t> size, OpOptions options) {
  if (!x.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Slice '", options.name.empty() ? "Slice" : options.name,
                     "': input 0 is an empty Output"));
  }
  GG_ASSIGN_OR_RETURN(Tensor b, IndexVector(begin));
  GG_ASSIGN_OR_RETURN(Tensor s, IndexVector(size));
  if (b.dtype() != s.dtype()) {
    GG_ASSIGN_OR_RETURN(
        b, op_util::VectorTensor<int64_t>(absl::Span<const int64_t>(begin)));
    GG_ASSIGN_OR_RETURN(
        s, op_util::VectorTensor<int64_t>(absl::Span<const int64_t>(size)));
  }
  const DataType index = b.dtype();
  GG_ASSIGN_OR_RETURN(NodeHandle h, BuildNode(*x.graph(), "Slice", options.name,
                                              {x, std::move(b), std::move(s)},
                                              std::move(options.control_inputs),
                                              {{"Index", index}}));
  return Output(std::move(h), 0);
}

absl::StatusOr<Output> Pad(const Output& x, std::vector<int64_t> paddings,
                           OpOptions options) {
  if (!x.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Pad '", options.name.empty() ? "Pad" : options.name,
                     "': input 0 is an empty Output"));
  }
  if (paddings.size() % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Pad '", options.name.empty() ? "Pad" : options.name,
        "': paddings must hold a (before, after) pair per axis, got ",
        paddings.size(), " values"));
  }
  const int64_t rows = static_cast<int64_t>(paddings.size() / 2);
  GG_ASSIGN_OR_RETURN(const Tensor v, IndexVector(paddings));
  GG_ASSIGN_OR_RETURN(Tensor p, v.Reshaped(TensorShape({rows, 2})));
  GG_ASSIGN_OR_RETURN(
      NodeHandle h,
      BuildNode(*x.graph(), "Pad", options.name, {x, std::move(p)},
                std::move(options.control_inputs), {{"Tpaddings", p.dtype()}}));
  return Output(std::move(h), 0);
}

}  // namespace ops
}  // namespace graphgc
