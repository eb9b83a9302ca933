// GatherV2 and UnsortedSegmentSum (ops/gather_ops.h). Shape functions and
// kernels share one check of the shapes each, so a graph refused at build
// time and a feed refused at run time get the same message (TensorFlow's).
#include "ops/gather_ops.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/op_util.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using op_util::CheckDtype;
using op_util::DispatchAll;
using op_util::DispatchNumeric;
using op_util::GradName;
using op_util::IntValues;
using op_util::MakeOp;
using op_util::MustRegister;

using Grads = std::vector<std::optional<Output>>;

constexpr std::initializer_list<DataType> kAllTypes = {DT_FLOAT, DT_INT32,
                                                       DT_INT64, DT_BOOL};
constexpr std::initializer_list<DataType> kNumericTypes = {DT_FLOAT, DT_INT32,
                                                           DT_INT64};
constexpr std::initializer_list<DataType> kIndexTypes = {DT_INT32, DT_INT64};

// "[1,2]" for element `flat` of a tensor of `shape` (TensorFlow's
// SliceDebugString): how the kernels name a bad index.
std::string ElementIndex(const TensorShape& shape, int64_t flat) {
  const int rank = shape.dims();
  if (rank == 0) return "";
  std::vector<int64_t> idx(rank);
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t dim = std::max<int64_t>(shape[d], 1);
    idx[d] = flat % dim;
    flat /= dim;
  }
  return absl::StrCat("[", absl::StrJoin(idx, ","), "]");
}

// The scalar value of a constant int input named `what`.
absl::StatusOr<int64_t> ScalarValue(const Tensor& t, absl::string_view what) {
  if (t.shape().dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> v, IntValues(t));
  return v[0];
}

// --- GatherV2 ---

// The output shape of gathering `indices` from `params` along `axis`
// (dimensions may be -1); `axis` nullopt: unknown, so is every dimension.
absl::StatusOr<TensorShape> GatherShape(const TensorShape& params,
                                        const TensorShape& indices,
                                        std::optional<int64_t> axis) {
  const int rank = params.dims();
  if (rank < 1) {
    return absl::InvalidArgumentError("params must be at least 1 dimensional");
  }
  const int out_rank = rank - 1 + indices.dims();
  if (!axis.has_value()) {
    return TensorShape(std::vector<int64_t>(out_rank, -1));
  }
  if (*axis < -rank || *axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected axis in the range [", -rank, ", ", rank,
                     "), but got ", *axis));
  }
  const int a = static_cast<int>(*axis < 0 ? *axis + rank : *axis);
  std::vector<int64_t> out;
  for (int d = 0; d < a; ++d) out.push_back(params[d]);
  for (int d = 0; d < indices.dims(); ++d) out.push_back(indices[d]);
  for (int d = a + 1; d < rank; ++d) out.push_back(params[d]);
  GG_RETURN_IF_ERROR(TensorShape::Validate(out, true));
  return TensorShape(out);
}

absl::StatusOr<std::vector<OutputInfo>> GatherV2ShapeFn(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(const DataType tparams,
                      GetAttr<DataType>(attrs, "Tparams"));
  GG_ASSIGN_OR_RETURN(const DataType tindices,
                      GetAttr<DataType>(attrs, "Tindices"));
  GG_ASSIGN_OR_RETURN(const DataType taxis, GetAttr<DataType>(attrs, "Taxis"));
  GG_ASSIGN_OR_RETURN(const int64_t batch_dims,
                      GetAttr<int64_t>(attrs, "batch_dims"));
  GG_RETURN_IF_ERROR(CheckDtype(tparams, kAllTypes, "Tparams"));
  GG_RETURN_IF_ERROR(CheckDtype(tindices, kIndexTypes, "Tindices"));
  GG_RETURN_IF_ERROR(CheckDtype(taxis, kIndexTypes, "Taxis"));
  if (batch_dims != 0) {
    return absl::UnimplementedError(
        absl::StrCat("batch_dims must be 0, got ", batch_dims));
  }
  const char* names[] = {"params", "indices", "axis"};
  const DataType want[] = {tparams, tindices, taxis};
  for (int k = 0; k < 3; ++k) {
    if (in[k].dtype != want[k]) {
      return absl::InvalidArgumentError(
          absl::StrCat(names[k], " is ", DataTypeString(in[k].dtype),
                       ", expected ", DataTypeString(want[k])));
    }
  }
  if (in[2].shape.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "axis must be a scalar, got shape ", in[2].shape.DebugString()));
  }
  std::optional<int64_t> axis;
  if (in[2].value.has_value()) {
    GG_ASSIGN_OR_RETURN(axis, ScalarValue(*in[2].value, "axis"));
  }
  GG_ASSIGN_OR_RETURN(TensorShape out,
                      GatherShape(in[0].shape, in[1].shape, axis));
  return std::vector<OutputInfo>{{tparams, out}};
}

// Copies, for each of `outer` blocks, the `inner`-element slices of
// `params` at `ids` (checked in [0, n)).
template <typename T>
void GatherCopy(const T* params, absl::Span<const int64_t> ids, int64_t outer,
                int64_t n, int64_t inner, T* out) {
  for (int64_t o = 0; o < outer; ++o) {
    const T* block = params + o * n * inner;
    for (int64_t id : ids) {
      std::copy(block + id * inner, block + (id + 1) * inner, out);
      out += inner;
    }
  }
}

absl::Status GatherV2Kernel(OpKernelContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  absl::StatusOr<int64_t> axis = ScalarValue(ctx.input(2), "axis");
  if (!axis.ok()) return ctx.InvalidArgument(axis.status().message());
  absl::StatusOr<TensorShape> shape =
      GatherShape(params.shape(), indices.shape(), *axis);
  if (!shape.ok()) return ctx.Error(shape.status());
  const int rank = params.shape().dims();
  const int a = static_cast<int>(*axis < 0 ? *axis + rank : *axis);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < a; ++d) outer *= params.shape()[d];
  for (int d = a + 1; d < rank; ++d) inner *= params.shape()[d];
  const int64_t n = params.shape()[a];
  absl::StatusOr<std::vector<int64_t>> ids = IntValues(indices);
  if (!ids.ok()) return ctx.InvalidArgument(ids.status().message());
  for (size_t i = 0; i < ids->size(); ++i) {
    if ((*ids)[i] < 0 || (*ids)[i] >= n) {
      return ctx.InvalidArgument(absl::StrCat(
          "indices", ElementIndex(indices.shape(), static_cast<int64_t>(i)),
          " = ", (*ids)[i], " is not in [0, ", n, ")"));
    }
  }
  GG_ASSIGN_OR_RETURN(Tensor * out,
                      ctx.allocate_output(0, params.dtype(), *shape));
  if (out->num_elements() == 0) return absl::OkStatus();
  return DispatchAll(params.dtype(), [&](auto tag) {
    using T = decltype(tag);
    GatherCopy<T>(params.data<T>().data(), *ids, outer, n, inner,
                  out->mutable_data<T>().data());
    return absl::OkStatus();
  });
}

// The params' gradient along axis 0: the upstream gradient's rows summed
// into the rows they were gathered from. The indices and the axis get none.
absl::StatusOr<Grads> GatherV2Grad(const GradContext& ctx) {
  Grads grads(3, std::nullopt);
  if (!ctx.grad_outputs[0].has_value()) return grads;
  const auto unsupported = [&](absl::string_view why) {
    return absl::UnimplementedError(
        absl::StrCat("GatherV2 '", ctx.node.name, "': gradient needs ", why));
  };
  std::optional<Tensor> axis_value = op_util::ConstValueOf(ctx.node.inputs[2]);
  if (!axis_value.has_value()) return unsupported("a constant axis");
  GG_ASSIGN_OR_RETURN(const int64_t axis, ScalarValue(*axis_value, "axis"));
  const TensorShape& params = ctx.node.inputs[0].shape();
  if (axis != 0 && axis != -params.dims()) return unsupported("axis 0");
  if (params[0] < 0) return unsupported("params' first dimension known");
  GG_ASSIGN_OR_RETURN(grads[0],
                      ops::UnsortedSegmentSum(
                          *ctx.grad_outputs[0], ctx.node.inputs[1], params[0],
                          {.name = GradName(ctx, "UnsortedSegmentSum")}));
  return grads;
}

// --- UnsortedSegmentSum ---

// [num_segments] + data[ids.rank:], after checking that ids' shape starts
// data's (dimensions may be -1, agreeing with any); num_segments -1:
// unknown.
absl::StatusOr<TensorShape> SegmentSumShape(const TensorShape& data,
                                            const TensorShape& ids,
                                            int64_t num_segments) {
  bool prefix = ids.dims() <= data.dims();
  for (int d = 0; prefix && d < ids.dims(); ++d) {
    prefix = ids[d] < 0 || data[d] < 0 || ids[d] == data[d];
  }
  if (!prefix) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data.shape = ", data.DebugString(),
        " does not start with segment_ids.shape = ", ids.DebugString()));
  }
  std::vector<int64_t> out = {num_segments};
  for (int d = ids.dims(); d < data.dims(); ++d) out.push_back(data[d]);
  GG_RETURN_IF_ERROR(TensorShape::Validate(out, true));
  return TensorShape(out);
}

absl::StatusOr<int64_t> NumSegments(const Tensor& t) {
  GG_ASSIGN_OR_RETURN(const int64_t n, ScalarValue(t, "num_segments"));
  if (n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input num_segments == ", n, " must not be negative."));
  }
  return n;
}

absl::StatusOr<std::vector<OutputInfo>> UnsortedSegmentSumShapeFn(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(const DataType t, GetAttr<DataType>(attrs, "T"));
  GG_ASSIGN_OR_RETURN(const DataType tindices,
                      GetAttr<DataType>(attrs, "Tindices"));
  GG_ASSIGN_OR_RETURN(const DataType tnum,
                      GetAttr<DataType>(attrs, "Tnumsegments"));
  GG_RETURN_IF_ERROR(CheckDtype(t, kNumericTypes, "T"));
  GG_RETURN_IF_ERROR(CheckDtype(tindices, kIndexTypes, "Tindices"));
  GG_RETURN_IF_ERROR(CheckDtype(tnum, kIndexTypes, "Tnumsegments"));
  const char* names[] = {"data", "segment_ids", "num_segments"};
  const DataType want[] = {t, tindices, tnum};
  for (int k = 0; k < 3; ++k) {
    if (in[k].dtype != want[k]) {
      return absl::InvalidArgumentError(
          absl::StrCat(names[k], " is ", DataTypeString(in[k].dtype),
                       ", expected ", DataTypeString(want[k])));
    }
  }
  if (in[2].shape.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_segments must be a scalar, got shape ",
                     in[2].shape.DebugString()));
  }
  int64_t n = -1;
  if (in[2].value.has_value()) {
    GG_ASSIGN_OR_RETURN(n, NumSegments(*in[2].value));
  }
  GG_ASSIGN_OR_RETURN(TensorShape out,
                      SegmentSumShape(in[0].shape, in[1].shape, n));
  return std::vector<OutputInfo>{{t, out}};
}

template <typename T>
void SegmentAdd(const T* data, absl::Span<const int64_t> ids, int64_t inner,
                T* out) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0) continue;  // dropped, as TensorFlow does
    const T* src = data + static_cast<int64_t>(i) * inner;
    T* dst = out + ids[i] * inner;
    for (int64_t k = 0; k < inner; ++k) {
      if constexpr (std::is_integral_v<T>) {
        // Wraps as TensorFlow's integer sums do, without signed overflow.
        using U = std::make_unsigned_t<T>;
        dst[k] =
            static_cast<T>(static_cast<U>(dst[k]) + static_cast<U>(src[k]));
      } else {
        dst[k] += src[k];
      }
    }
  }
}

absl::Status UnsortedSegmentSumKernel(OpKernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& segment_ids = ctx.input(1);
  absl::StatusOr<int64_t> n = NumSegments(ctx.input(2));
  if (!n.ok()) return ctx.InvalidArgument(n.status().message());
  absl::StatusOr<TensorShape> shape =
      SegmentSumShape(data.shape(), segment_ids.shape(), *n);
  if (!shape.ok()) return ctx.Error(shape.status());
  absl::StatusOr<std::vector<int64_t>> ids = IntValues(segment_ids);
  if (!ids.ok()) return ctx.InvalidArgument(ids.status().message());
  for (size_t i = 0; i < ids->size(); ++i) {
    if ((*ids)[i] >= *n) {
      return ctx.InvalidArgument(absl::StrCat(
          "segment_ids",
          ElementIndex(segment_ids.shape(), static_cast<int64_t>(i)), " = ",
          (*ids)[i], " is out of range [0, ", *n, ")"));
    }
  }
  absl::StatusOr<Tensor> out = op_util::NewOutput(ctx, data.dtype(), *shape);
  if (!out.ok()) return out.status();
  int64_t inner = 1;
  for (int d = segment_ids.shape().dims(); d < data.shape().dims(); ++d) {
    inner *= data.shape()[d];
  }
  if (data.num_elements() > 0 && out->num_elements() > 0) {
    GG_RETURN_IF_ERROR(DispatchNumeric(data.dtype(), [&](auto tag) {
      using T = decltype(tag);
      SegmentAdd<T>(data.data<T>().data(), *ids, inner,
                    out->mutable_data<T>().data());
      return absl::OkStatus();
    }));
  }
  ctx.set_output(0, std::move(*out));
  return absl::OkStatus();
}

// The data's gradient: the upstream gradient's row of each id (a negative
// id, whose row was dropped, is refused at run time by GatherV2).
absl::StatusOr<Grads> UnsortedSegmentSumGrad(const GradContext& ctx) {
  Grads grads(3, std::nullopt);
  if (!ctx.grad_outputs[0].has_value()) return grads;
  GG_ASSIGN_OR_RETURN(grads[0],
                      ops::GatherV2(*ctx.grad_outputs[0], ctx.node.inputs[1], 0,
                                    {.name = GradName(ctx, "GatherV2")}));
  return grads;
}

}  // namespace

void RegisterGatherOps(OpRegistry& r) {
  MustRegister(r, MakeOp("GatherV2", {"params", "indices", "axis"}, 1,
                         {{"batch_dims", "int", AttrValue(int64_t{0})},
                          {"Tparams", "type"},
                          {"Tindices", "type"},
                          {"Taxis", "type"}},
                         GatherV2ShapeFn, GatherV2Kernel, GatherV2Grad));
  MustRegister(r, MakeOp("UnsortedSegmentSum",
                         {"data", "segment_ids", "num_segments"}, 1,
                         {{"T", "type"},
                          {"Tindices", "type"},
                          {"Tnumsegments", "type", AttrValue(DT_INT32)}},
                         UnsortedSegmentSumShapeFn, UnsortedSegmentSumKernel,
                         UnsortedSegmentSumGrad));
}

namespace ops {

absl::StatusOr<Output> GatherV2(const Output& params, const Output& indices,
                                int64_t axis, OpOptions options) {
  const std::string name = options.name.empty() ? "GatherV2" : options.name;
  if (!params.valid() || !indices.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("GatherV2 '", name, "': input ", params.valid() ? 1 : 0,
                     " is an empty Output"));
  }
  if (axis < std::numeric_limits<int32_t>::min() ||
      axis > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GatherV2 '", name, "': axis ", axis, " does not fit int32"));
  }
  GG_ASSIGN_OR_RETURN(
      NodeHandle h,
      BuildNode(*params.graph(), "GatherV2", options.name,
                {params, indices,
                 Tensor::Scalar<int32_t>(static_cast<int32_t>(axis))},
                std::move(options.control_inputs),
                {{"Tparams", params.dtype()},
                 {"Tindices", indices.dtype()},
                 {"Taxis", DT_INT32}}));
  return Output(std::move(h), 0);
}

absl::StatusOr<Output> UnsortedSegmentSum(const Output& data,
                                          const Output& segment_ids,
                                          int64_t num_segments,
                                          OpOptions options) {
  const std::string name =
      options.name.empty() ? "UnsortedSegmentSum" : options.name;
  if (!data.valid() || !segment_ids.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("UnsortedSegmentSum '", name, "': input ",
                     data.valid() ? 1 : 0, " is an empty Output"));
  }
  Tensor n = num_segments > std::numeric_limits<int32_t>::max()
                 ? Tensor::Scalar<int64_t>(num_segments)
                 : Tensor::Scalar<int32_t>(static_cast<int32_t>(num_segments));
  const DataType tnum = n.dtype();
  GG_ASSIGN_OR_RETURN(
      NodeHandle h,
      BuildNode(*data.graph(), "UnsortedSegmentSum", options.name,
                {data, segment_ids, std::move(n)},
                std::move(options.control_inputs),
                {{"Tindices", segment_ids.dtype()}, {"Tnumsegments", tnum}}));
  return Output(std::move(h), 0);
}

}  // namespace ops
}  // namespace graphgc
