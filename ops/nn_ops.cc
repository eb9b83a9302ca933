// Neural-network ops: BiasAdd, BiasAddGrad, Relu, ReluGrad, Softmax,
// LogSoftmax, SparseSoftmaxCrossEntropyWithLogits. All float, over the last
// dimension (NHWC).
#include "ops/nn_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "Eigen/Core"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "ops/small_gemm.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using op_util::GradName;
using op_util::MakeOp;
using op_util::MustRegister;
using op_util::NewOutput;
using op_util::NewUninitializedOutput;

using Grads = std::vector<std::optional<Output>>;
using RowArray =
    Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRows = Eigen::Map<const RowArray>;
using Rows = Eigen::Map<RowArray>;

absl::Status CheckFloat(DataType t, absl::string_view what) {
  return op_util::CheckDtype(t, {DT_FLOAT}, what);
}

absl::Status CheckDataFormat(const AttrMap& attrs) {
  const std::string f = GetAttrOr<std::string>(attrs, "data_format", "NHWC");
  if (f != "NHWC") {
    return absl::UnimplementedError(
        absl::StrCat("data_format ", f, " is not supported (only NHWC)"));
  }
  return absl::OkStatus();
}

// --- BiasAdd, BiasAddGrad ---

absl::StatusOr<std::vector<OutputInfo>> BiasAddShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(op_util::CheckInputsMatchT(attrs, in, {DT_FLOAT}));
  GG_RETURN_IF_ERROR(CheckDataFormat(attrs));
  if (in[0].shape.dims() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "value must have rank >= 2, got shape ", in[0].shape.DebugString()));
  }
  if (in[1].shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bias must be a vector, got shape ", in[1].shape.DebugString()));
  }
  TensorShape out = in[0].shape;
  const int last = out.dims() - 1;
  const int64_t c = out[last];
  const int64_t b = in[1].shape[0];
  if (c >= 0 && b >= 0 && c != b) {
    return absl::InvalidArgumentError(
        absl::StrCat("bias has ", b, " elements but value's last dimension is ",
                     c, " (value ", in[0].shape.DebugString(), ")"));
  }
  if (c < 0) out.set_dim(last, b);
  return std::vector<OutputInfo>{{DT_FLOAT, out}};
}

// out[r, j] = x[r, j] + bias[j] for `rows` rows of c values (out may be
// x itself, not bias). Packets along each row; when c is not a multiple of the
// packet size, the row's last packet ends at c and overlaps the one before
// it. That packet is computed from the row's x before any store to the row,
// so when out is x (a forwarded input) the shared lanes still get the bias
// once, not twice. Rows shorter than a
// packet are added one value at a time. (Eigen's column-wise broadcast
// peeled each short row into scalar prologues and epilogues.)
void AddBiasRows(const float* x, const float* bias, int64_t rows, int64_t c,
                 float* out) {
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<float>::type;
  constexpr int64_t kPacket = ei::packet_traits<float>::size;
  if (c < kPacket) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < c; ++j) out[r * c + j] = x[r * c + j] + bias[j];
    }
    return;
  }
  const int64_t last = c - kPacket;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* outr = out + r * c;
    const Packet tail = ei::padd(ei::ploadu<Packet>(xr + last),
                                 ei::ploadu<Packet>(bias + last));
    for (int64_t j = 0; j < last; j += kPacket) {
      ei::pstoreu(outr + j, ei::padd(ei::ploadu<Packet>(xr + j),
                                     ei::ploadu<Packet>(bias + j)));
    }
    ei::pstoreu(outr + last, tail);
  }
}

absl::Status BiasAddKernel(OpKernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (x.shape().dims() < 2 || b.shape().dims() != 1 ||
      x.shape()[x.shape().dims() - 1] != b.shape()[0]) {
    return ctx.InvalidArgument(absl::StrCat(
        "bias of shape ", b.shape().DebugString(),
        " does not match value of shape ", x.shape().DebugString()));
  }
  const float* xp = x.data<float>().data();
  GG_ASSIGN_OR_RETURN(Tensor * out, ctx.forward_input_or_allocate_output(
                                        0, 0, DT_FLOAT, x.shape()));
  const int64_t c = b.num_elements();
  if (out->num_elements() > 0 && c > 0) {
    AddBiasRows(xp, b.data<float>().data(), out->num_elements() / c, c,
                out->mutable_data<float>().data());
  }
  return absl::OkStatus();
}

// out[j] = sum over r of g[r, j], for N column packets starting at
// start[0..N): the N accumulators stay in registers over all the rows.
template <int N>
void SumRowPackets(const float* g, int64_t rows, int64_t c,
                   const int64_t* start, float* out) {
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<float>::type;
  Packet acc[N];
#pragma GCC unroll 8
  for (int q = 0; q < N; ++q) acc[q] = ei::pset1<Packet>(0.f);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = g + r * c;
#pragma GCC unroll 8
    for (int q = 0; q < N; ++q) {
      acc[q] = ei::padd(acc[q], ei::ploadu<Packet>(row + start[q]));
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < N; ++q) ei::pstoreu(out + start[q], acc[q]);
}

// out[j] = sum over r of g[r, j] for `rows` rows of c values: column
// packets, summed down the rows, up to eight at a time. When c is not a
// multiple of the packet size the last packet ends at c and overlaps the
// one before; both sum the shared columns in the same order, so either
// store leaves the same values. Rows shorter than a packet are summed one
// value at a time. (Eigen's row-wise sum of the column-major view took
// twice the instructions on the seed's 32 x 10 and 32 x 64.)
void SumRows(const float* g, int64_t rows, int64_t c, float* out) {
  constexpr int64_t kPacket = Eigen::internal::packet_traits<float>::size;
  if (c < kPacket) {
    std::fill(out, out + c, 0.f);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < c; ++j) out[j] += g[r * c + j];
    }
    return;
  }
  constexpr int kChunk = 8;
  const int64_t packets = (c + kPacket - 1) / kPacket;
  for (int64_t p0 = 0; p0 < packets; p0 += kChunk) {
    const int n = static_cast<int>(std::min<int64_t>(kChunk, packets - p0));
    int64_t start[kChunk];
    for (int q = 0; q < n; ++q) {
      start[q] = std::min((p0 + q) * kPacket, c - kPacket);
    }
    using SumFn =
        void (*)(const float*, int64_t, int64_t, const int64_t*, float*);
    static constexpr SumFn kSums[kChunk] = {
        SumRowPackets<1>, SumRowPackets<2>, SumRowPackets<3>, SumRowPackets<4>,
        SumRowPackets<5>, SumRowPackets<6>, SumRowPackets<7>, SumRowPackets<8>};
    kSums[n - 1](g, rows, c, start, out);
  }
}

absl::Status BiasAddGradKernel(OpKernelContext& ctx) {
  const Tensor& g = ctx.input(0);
  if (g.shape().dims() < 2) {
    return ctx.InvalidArgument(absl::StrCat(
        "out_backprop must have rank >= 2, got ", g.shape().DebugString()));
  }
  const int64_t c = g.shape()[g.shape().dims() - 1];
  GG_ASSIGN_OR_RETURN(Tensor * out,
                      ctx.allocate_output(0, DT_FLOAT, TensorShape{c}));
  if (c > 0) {
    SumRows(g.data<float>().data(), g.num_elements() / c, c,
            out->mutable_data<float>().data());
  }
  return absl::OkStatus();
}

// --- Relu, ReluGrad ---

absl::StatusOr<std::vector<OutputInfo>> SameFloatShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(op_util::CheckInputsMatchT(attrs, in, {DT_FLOAT}));
  TensorShape s = in[0].shape;
  for (size_t i = 1; i < in.size(); ++i) {
    GG_ASSIGN_OR_RETURN(TensorShape b,
                        op_util::BroadcastShapes(s, in[i].shape));
    if (in[i].shape.dims() != s.dims() || b.dims() != s.dims()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inputs must have one shape, got ", in[0].shape.DebugString(),
          " and ", in[i].shape.DebugString()));
    }
    for (int d = 0; d < s.dims(); ++d) {
      const int64_t a = s[d], c = in[i].shape[d];
      if (a >= 0 && c >= 0 && a != c) {
        return absl::InvalidArgumentError(absl::StrCat(
            "inputs must have one shape, got ", in[0].shape.DebugString(),
            " and ", in[i].shape.DebugString()));
      }
      if (a < 0) s.set_dim(d, c);
    }
  }
  return std::vector<OutputInfo>{{DT_FLOAT, s}};
}

absl::Status ReluKernel(OpKernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor::ConstFlat<float> xf = x.flat<float>();
  GG_ASSIGN_OR_RETURN(Tensor * out, ctx.forward_input_or_allocate_output(
                                        0, 0, DT_FLOAT, x.shape()));
  out->mutable_flat<float>() = xf.max(0.0f);
  return absl::OkStatus();
}

absl::Status ReluGradKernel(OpKernelContext& ctx) {
  const Tensor& g = ctx.input(0);
  const Tensor& f = ctx.input(1);
  if (g.shape() != f.shape()) {
    return ctx.InvalidArgument(
        absl::StrCat("gradients ", g.shape().DebugString(), " and features ",
                     f.shape().DebugString(), " differ in shape"));
  }
  const Tensor::ConstFlat<float> gf = g.flat<float>();
  GG_ASSIGN_OR_RETURN(Tensor * out, ctx.forward_input_or_allocate_output(
                                        0, 0, DT_FLOAT, g.shape()));
  // Eigen's select vectorises (a compare and a blend per packet); same
  // values as f > 0 ? g : 0.
  out->mutable_flat<float>() = (f.flat<float>() > 0.0f).select(gf, 0.0f);
  return absl::OkStatus();
}

// --- Softmax, LogSoftmax ---

absl::StatusOr<std::vector<OutputInfo>> LogitsShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(op_util::CheckInputsMatchT(attrs, in, {DT_FLOAT}));
  if (in[0].shape.dims() < 1) {
    return absl::InvalidArgumentError("logits must have rank >= 1");
  }
  return std::vector<OutputInfo>{{DT_FLOAT, in[0].shape}};
}

// Row-wise softmax over the last dimension, stable for large logits
// (subtracts each row's maximum first). log_out: log-softmax instead.
template <bool kLog>
absl::Status SoftmaxKernel(OpKernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.shape().dims() < 1)
    return ctx.InvalidArgument("logits must have rank >= 1");
  GG_ASSIGN_OR_RETURN(Tensor out,
                      NewUninitializedOutput(ctx, DT_FLOAT, x.shape()));
  const int64_t c = x.shape()[x.shape().dims() - 1];
  if (out.num_elements() > 0 && c > 0) {
    const int64_t rows = x.num_elements() / c;
    ConstRows in(x.data<float>().data(), rows, c);
    Rows o(out.mutable_data<float>().data(), rows, c);
    Eigen::ArrayXf max = in.rowwise().maxCoeff();
    o = in.colwise() - max;
    if constexpr (kLog) {
      Eigen::ArrayXf lse = o.exp().rowwise().sum().log();
      o.colwise() -= lse;
    } else {
      o = o.exp();
      Eigen::ArrayXf sum = o.rowwise().sum();
      o.colwise() /= sum;
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::StatusOr<Grads> SoftmaxGrad(const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) return Grads(1);
  const Output& g = *ctx.grad_outputs[0];
  const Output& y = ctx.outputs[0];
  // dx = (g - sum(g * y, -1, keep)) * y
  GG_ASSIGN_OR_RETURN(Output gy,
                      ops::Mul(g, y, {.name = GradName(ctx, "Mul")}));
  GG_ASSIGN_OR_RETURN(Output s, ops::Sum(gy, {.name = GradName(ctx, "Sum"),
                                              .axes = {-1},
                                              .keep_dims = true}));
  GG_ASSIGN_OR_RETURN(Output d, ops::Sub(g, s, {.name = GradName(ctx, "Sub")}));
  GG_ASSIGN_OR_RETURN(Output dx,
                      ops::Mul(d, y, {.name = GradName(ctx, "Mul_1")}));
  return Grads{dx};
}

absl::StatusOr<Grads> LogSoftmaxGrad(const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) return Grads(1);
  const Output& g = *ctx.grad_outputs[0];
  const Output& y = ctx.outputs[0];
  // dx = g - sum(g, -1, keep) * exp(y)
  GG_ASSIGN_OR_RETURN(Output s, ops::Sum(g, {.name = GradName(ctx, "Sum"),
                                             .axes = {-1},
                                             .keep_dims = true}));
  GG_ASSIGN_OR_RETURN(Output p, ops::Exp(y, {.name = GradName(ctx, "Exp")}));
  GG_ASSIGN_OR_RETURN(Output sp,
                      ops::Mul(s, p, {.name = GradName(ctx, "Mul")}));
  GG_ASSIGN_OR_RETURN(Output dx,
                      ops::Sub(g, sp, {.name = GradName(ctx, "Sub")}));
  return Grads{dx};
}

// --- SparseSoftmaxCrossEntropyWithLogits ---

absl::StatusOr<std::vector<OutputInfo>> XentShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
  GG_ASSIGN_OR_RETURN(DataType tl, GetAttr<DataType>(attrs, "Tlabels"));
  GG_RETURN_IF_ERROR(CheckFloat(t, "T"));
  GG_RETURN_IF_ERROR(op_util::CheckDtype(tl, {DT_INT32, DT_INT64}, "Tlabels"));
  if (in[0].dtype != t) {
    return absl::InvalidArgumentError(
        absl::StrCat("features are ", DataTypeString(in[0].dtype), ", T is ",
                     DataTypeString(t)));
  }
  if (in[1].dtype != tl) {
    return absl::InvalidArgumentError(
        absl::StrCat("labels are ", DataTypeString(in[1].dtype),
                     ", Tlabels is ", DataTypeString(tl)));
  }
  if (in[0].shape.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("features must be [batch, classes], got shape ",
                     in[0].shape.DebugString()));
  }
  if (in[1].shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "labels must be [batch], got shape ", in[1].shape.DebugString()));
  }
  int64_t b = in[0].shape[0];
  const int64_t lb = in[1].shape[0];
  if (b >= 0 && lb >= 0 && b != lb) {
    return absl::InvalidArgumentError(absl::StrCat(
        "features have ", b, " rows but labels have ", lb, " entries"));
  }
  if (b < 0) b = lb;
  return std::vector<OutputInfo>{{DT_FLOAT, TensorShape{b}},
                                 {DT_FLOAT, TensorShape{b, in[0].shape[1]}}};
}

// The kernel for labels of type L (int32 or int64), read in place: no
// int64 copy, and no dtype test per label read (this runs every step).
template <typename L>
absl::Status XentKernelOf(OpKernelContext& ctx, const Tensor& x,
                          const L* label_data) {
  const int64_t rows = x.shape()[0];
  const int64_t c = x.shape()[1];
  for (int64_t i = 0; i < rows; ++i) {
    if (label_data[i] < 0 || label_data[i] >= c) {
      return ctx.InvalidArgument(absl::StrCat("label ", label_data[i],
                                              " at row ", i,
                                              " is out of range [0, ", c, ")"));
    }
  }
  GG_ASSIGN_OR_RETURN(Tensor * loss,
                      ctx.allocate_output(0, DT_FLOAT, TensorShape{rows}));
  GG_ASSIGN_OR_RETURN(Tensor * back,
                      ctx.allocate_output(1, DT_FLOAT, x.shape()));
  if (rows > 0) {  // rows > 0 implies c > 0: every label is in [0, c)
    // Vectorised across the batch rather than along each row (a row of a
    // few classes fills a packet poorly): the logits are first transposed
    // into a column-major scratch, where each class is a contiguous column and
    // every per-row step (max, shift, exp, sum) is a packet operation over
    // many rows at once. Both outputs then come from the exponentials: the
    // loss is log-sum-exp minus the label's shifted logit, the backprop is
    // the softmax minus the one-hot label.
    using ColMajor = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic>;
    // The scratch: the rows x c exponentials, then one sum per row; on the
    // stack for a batch that fits (a training step's), so a step allocates
    // nothing for it.
    constexpr int64_t kStackFloats = 2048;
    alignas(64) float stack[kStackFloats];
    Tensor scratch;
    float* base = stack;
    if (rows * (c + 1) > kStackFloats) {
      GG_ASSIGN_OR_RETURN(scratch, Tensor::Uninitialized(
                                       DT_FLOAT, TensorShape{rows * (c + 1)}));
      base = scratch.mutable_data<float>().data();
    }
    Eigen::Map<ColMajor> e(base, rows, c);
    Eigen::Map<Eigen::ArrayXf> sum(base + rows * c, rows);
    gemm::Transpose(x.data<float>().data(), rows, c, c, base, rows);
    sum = e.rowwise().maxCoeff();  // the max, until the sum replaces it
    e.colwise() -= sum;
    // The label's shifted logit, read before the exponentials replace it.
    Eigen::Map<Eigen::ArrayXf> l(loss->mutable_data<float>().data(), rows);
    for (int64_t i = 0; i < rows; ++i) l[i] = e(i, label_data[i]);
    e = e.exp();
    sum = e.rowwise().sum();
    l = sum.log() - l;
    sum = sum.inverse();
    e.colwise() *= sum;
    float* const b = back->mutable_data<float>().data();
    gemm::Transpose(base, c, rows, rows, b, c);
    for (int64_t i = 0; i < rows; ++i) b[i * c + label_data[i]] -= 1.0f;
  }
  return absl::OkStatus();
}

absl::Status XentKernel(OpKernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  if (x.shape().dims() != 2 || labels.shape().dims() != 1 ||
      labels.shape()[0] != x.shape()[0]) {
    return ctx.InvalidArgument(absl::StrCat(
        "features ", x.shape().DebugString(), " and labels ",
        labels.shape().DebugString(), " must be [batch, classes] and [batch]"));
  }
  switch (labels.dtype()) {
    case DT_INT32:
      return XentKernelOf(ctx, x, labels.data<int32_t>().data());
    case DT_INT64:
      return XentKernelOf(ctx, x, labels.data<int64_t>().data());
    default:
      return ctx.InvalidArgument(
          absl::StrCat("labels must be int32 or int64, got ",
                       DataTypeString(labels.dtype())));
  }
}

absl::StatusOr<Grads> XentGrad(const GradContext& ctx) {
  // The gradient of the backprop output is not propagated (as TensorFlow
  // without second-order terms); only the loss gradient flows.
  if (!ctx.grad_outputs[0].has_value()) return Grads(2);
  GG_ASSIGN_OR_RETURN(Output g,
                      ops::Reshape(*ctx.grad_outputs[0], TensorShape{-1, 1},
                                   {.name = GradName(ctx, "ExpandDims")}));
  GG_ASSIGN_OR_RETURN(
      Output dx, ops::Mul(ctx.outputs[1], g, {.name = GradName(ctx, "Mul")}));
  return Grads{dx, std::nullopt};
}

}  // namespace

void RegisterNnOps(OpRegistry& r) {
  MustRegister(
      r, MakeOp("BiasAdd", {"value", "bias"}, 1,
                {{"T", "type"},
                 {"data_format", "string", AttrValue(std::string("NHWC"))}},
                BiasAddShape, BiasAddKernel,
                [](const GradContext& ctx) -> absl::StatusOr<Grads> {
                  if (!ctx.grad_outputs[0].has_value()) return Grads(2);
                  GG_ASSIGN_OR_RETURN(
                      Output gb,
                      ops::BiasAddGrad(*ctx.grad_outputs[0],
                                       {.name = GradName(ctx, "BiasAddGrad")}));
                  return Grads{ctx.grad_outputs[0], gb};
                }));
  MustRegister(
      r,
      MakeOp(
          "BiasAddGrad", {"out_backprop"}, 1,
          {{"T", "type"},
           {"data_format", "string", AttrValue(std::string("NHWC"))}},
          [](const AttrMap& attrs, absl::Span<const InputInfo> in)
              -> absl::StatusOr<std::vector<OutputInfo>> {
            GG_RETURN_IF_ERROR(
                op_util::CheckInputsMatchT(attrs, in, {DT_FLOAT}));
            GG_RETURN_IF_ERROR(CheckDataFormat(attrs));
            if (in[0].shape.dims() < 2) {
              return absl::InvalidArgumentError(
                  absl::StrCat("out_backprop must have rank >= 2, got shape ",
                               in[0].shape.DebugString()));
            }
            return std::vector<OutputInfo>{
                {DT_FLOAT, TensorShape{in[0].shape[in[0].shape.dims() - 1]}}};
          },
          BiasAddGradKernel,
          [](const GradContext& ctx) -> absl::StatusOr<Grads> {
            if (!ctx.grad_outputs[0].has_value()) return Grads(1);
            GG_ASSIGN_OR_RETURN(
                Output ones,
                ops::OnesLike(ctx.node.inputs[0],
                              {.name = GradName(ctx, "OnesLike")}));
            GG_ASSIGN_OR_RETURN(Output g,
                                ops::Mul(ones, *ctx.grad_outputs[0],
                                         {.name = GradName(ctx, "Mul")}));
            return Grads{g};
          }));
  MustRegister(
      r,
      MakeOp("Relu", {"features"}, 1, {{"T", "type"}}, SameFloatShape,
             ReluKernel, [](const GradContext& ctx) -> absl::StatusOr<Grads> {
               if (!ctx.grad_outputs[0].has_value()) return Grads(1);
               GG_ASSIGN_OR_RETURN(
                   Output g,
                   ops::ReluGrad(*ctx.grad_outputs[0], ctx.outputs[0],
                                 {.name = GradName(ctx, "ReluGrad")}));
               return Grads{g};
             }));
  MustRegister(
      r, MakeOp("ReluGrad", {"gradients", "features"}, 1, {{"T", "type"}},
                SameFloatShape, ReluGradKernel,
                [](const GradContext& ctx) -> absl::StatusOr<Grads> {
                  if (!ctx.grad_outputs[0].has_value()) return Grads(2);
                  GG_ASSIGN_OR_RETURN(
                      Output g,
                      ops::ReluGrad(*ctx.grad_outputs[0], ctx.node.inputs[1],
                                    {.name = GradName(ctx, "ReluGrad")}));
                  return Grads{g, std::nullopt};
                }));
  MustRegister(r, MakeOp("Softmax", {"logits"}, 1, {{"T", "type"}}, LogitsShape,
                         SoftmaxKernel<false>, SoftmaxGrad));
  MustRegister(r, MakeOp("LogSoftmax", {"logits"}, 1, {{"T", "type"}},
                         LogitsShape, SoftmaxKernel<true>, LogSoftmaxGrad));
  MustRegister(
      r, MakeOp("SparseSoftmaxCrossEntropyWithLogits", {"features", "labels"},
                2, {{"T", "type"}, {"Tlabels", "type", AttrValue(DT_INT64)}},
                XentShape, XentKernel, XentGrad));
}

}  // namespace graphgc
