// ops/fused_training_kernels.cc
#include "ops/fused_training_kernels.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ops/array_ops.h"
#include "ops/op_util.h"
#include "ops/resources.h"
#include "ops/state_ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// "<op> '<name>': <message>": a refusal worded as the kernel of the chain's
// node `name` words it (OpKernelContext::InvalidArgument).
absl::Status NodeError(absl::string_view op, const std::string& name,
                       absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(op, " '", name, "': ", message));
}

// `status` (not OK) with its code, named for the chain's node `name` as
// the executor names a kernel's failure (KernelError): prefixed with
// "<op> '<name>': " unless it already names the node.
absl::Status Named(absl::string_view op, const std::string& name,
                   const absl::Status& status) {
  if (absl::StrContains(status.message(), absl::StrCat("'", name, "'"))) {
    return status;
  }
  return absl::Status(status.code(),
                      absl::StrCat(op, " '", name, "': ", status.message()));
}

absl::Status FusedLossGradientKernel(const FusedLossGradientSpec& spec,
                                     OpKernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& g = ctx.input(1);
  const Tensor& d = ctx.input(2);
  const Tensor& backprop = ctx.input(4);
  // The shapes of Mul(g, OnesLike(x)), of the RealDiv, of the Reshape and
  // of the last Mul, refused where their kernels refuse them.
  const absl::StatusOr<TensorShape> product =
      op_util::BroadcastShapes(g.shape(), x.shape());
  if (!product.ok()) {
    return NodeError("Mul", spec.mul_name, product.status().message());
  }
  const absl::StatusOr<TensorShape> quotient =
      op_util::BroadcastShapes(*product, d.shape());
  if (!quotient.ok()) {
    return NodeError("RealDiv", spec.real_div_name,
                     quotient.status().message());
  }
  const absl::StatusOr<std::vector<int64_t>> dims =
      op_util::IntValues(ctx.input(3));
  if (!dims.ok()) {
    return NodeError("Reshape", spec.reshape_name, dims.status().message());
  }
  const absl::StatusOr<TensorShape> reshaped =
      ResolveReshape(TensorShape(*dims), quotient->num_elements(), true);
  if (!reshaped.ok()) {
    return NodeError("Reshape", spec.reshape_name, reshaped.status().message());
  }
  const absl::StatusOr<TensorShape> shape =
      op_util::BroadcastShapes(backprop.shape(), *reshaped);
  if (!shape.ok()) return ctx.InvalidArgument(shape.status().message());
  using Array = Eigen::Map<Eigen::ArrayXf>;
  using ConstArray = Eigen::Map<const Eigen::ArrayXf>;
  const int64_t n = shape->num_elements();
  if (g.num_elements() == 1 && d.num_elements() == 1) {
    // Every value of the product is g times OnesLike's 1, so every value
    // of the quotient, and of its reshape, is this one number.
    const float one = 1.0f;
    const float scale = (g.data<float>()[0] * one) / d.data<float>()[0];
    Tensor* out;
    if (*shape == backprop.shape()) {
      // Read before a forward empties the input; when forwarded, out
      // shares this buffer, and each value is read before it is written.
      const float* b = backprop.data<float>().data();
      GG_ASSIGN_OR_RETURN(
          out, ctx.forward_input_or_allocate_output(4, 0, DT_FLOAT, *shape));
      Array(out->mutable_data<float>().data(), n) = ConstArray(b, n) * scale;
    } else {
      GG_ASSIGN_OR_RETURN(Tensor b,
                          op_util::BroadcastTo<float>(backprop, *shape));
      GG_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, DT_FLOAT, *shape));
      Array(out->mutable_data<float>().data(), n) =
          ConstArray(b.data<float>().data(), n) * scale;
    }
    return absl::OkStatus();
  }
  // g or d of several values: each intermediate as its kernel computes it.
  GG_ASSIGN_OR_RETURN(Tensor p, op_util::BroadcastTo<float>(g, *product));
  p.mutable_flat<float>() *= 1.0f;
  GG_ASSIGN_OR_RETURN(Tensor q, op_util::BroadcastTo<float>(p, *quotient));
  GG_ASSIGN_OR_RETURN(Tensor den, op_util::BroadcastTo<float>(d, *quotient));
  q.mutable_flat<float>() /= den.flat<float>();
  absl::StatusOr<Tensor> r = q.Reshaped(*reshaped);
  if (!r.ok()) {
    return NodeError("Reshape", spec.reshape_name, r.status().message());
  }
  GG_ASSIGN_OR_RETURN(Tensor rb, op_util::BroadcastTo<float>(*r, *shape));
  GG_ASSIGN_OR_RETURN(Tensor b, op_util::BroadcastTo<float>(backprop, *shape));
  GG_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DT_FLOAT, *shape));
  out->mutable_flat<float>() = b.flat<float>() * rb.flat<float>();
  return absl::OkStatus();
}

absl::Status FusedScaleVariableKernel(const FusedScaleVariableSpec& spec,
                                      OpKernelContext& ctx) {
  // ReadVariableOp: a snapshot of the variable, under its lock.
  VariableResource* from = AsVariable(ctx.input_resource(0));
  if (from == nullptr) {
    return NodeError("ReadVariableOp", spec.read_name,
                     "input 0 is not a variable (VarHandleOp) resource");
  }
  absl::StatusOr<Tensor> value = from->Read();
  if (!value.ok()) {
    return Named("ReadVariableOp", spec.read_name, value.status());
  }
  // Mul: the snapshot times the factor, broadcast as Mul broadcasts.
  const Tensor& factor = ctx.input(1);
  const absl::StatusOr<TensorShape> shape =
      op_util::BroadcastShapes(value->shape(), factor.shape());
  if (!shape.ok()) {
    return NodeError("Mul", spec.mul_name, shape.status().message());
  }
  absl::StatusOr<Tensor> product = Tensor::Uninitialized(DT_FLOAT, *shape);
  if (!product.ok()) return Named("Mul", spec.mul_name, product.status());
  if (value->shape() == *shape && factor.num_elements() == 1) {
    product->mutable_flat<float>() =
        value->flat<float>() * factor.data<float>()[0];
  } else {
    absl::StatusOr<Tensor> v = op_util::BroadcastTo<float>(*value, *shape);
    if (!v.ok()) return Named("Mul", spec.mul_name, v.status());
    absl::StatusOr<Tensor> f = op_util::BroadcastTo<float>(factor, *shape);
    if (!f.ok()) return Named("Mul", spec.mul_name, f.status());
    product->mutable_flat<float>() = v->flat<float>() * f->flat<float>();
  }
  // AssignVariableOp: the product becomes the variable's value.
  VariableResource* to = AsVariable(ctx.input_resource(2));
  if (to == nullptr) {
    return ctx.InvalidArgument(
        "input 0 is not a variable (VarHandleOp) resource");
  }
  absl::Status s = to->Assign(*std::move(product));
  if (!s.ok()) return ctx.InvalidArgument(s.message());
  return absl::OkStatus();
}

}  // namespace

KernelFn BindFusedSizeCast(DataType size_type, DataType cast_to) {
  return [size_type, cast_to](OpKernelContext& ctx) -> absl::Status {
    // Size's value (the count, wrapped to int32 unless Size is int64), then
    // Cast's conversion of that value.
    const int64_t n = ctx.input(0).num_elements();
    const int64_t counted = size_type == DT_INT64 ? n : static_cast<int32_t>(n);
    switch (cast_to) {
      case DT_FLOAT:
        ctx.set_output(0, Tensor::Scalar<float>(static_cast<float>(counted)));
        return absl::OkStatus();
      case DT_INT32:
        ctx.set_output(0,
                       Tensor::Scalar<int32_t>(static_cast<int32_t>(counted)));
        return absl::OkStatus();
      case DT_INT64:
        ctx.set_output(0, Tensor::Scalar<int64_t>(counted));
        return absl::OkStatus();
      default:
        return ctx.InvalidArgument(
            absl::StrCat("a fused Size -> Cast to ", DataTypeString(cast_to)));
    }
  };
}

KernelFn BindFusedScaleVariable(FusedScaleVariableSpec spec) {
  return [spec = std::move(spec)](OpKernelContext& ctx) {
    return FusedScaleVariableKernel(spec, ctx);
  };
}

KernelFn BindFusedLossGradient(FusedLossGradientSpec spec) {
  return [spec = std::move(spec)](OpKernelContext& ctx) {
    return FusedLossGradientKernel(spec, ctx);
  };
}

FusionRule FusedLossGradientRule(const OpDef& ones_like, const OpDef& mul,
                                 const OpDef& real_div, const OpDef& reshape) {
  return {.chain = {&ones_like, &mul, &real_div, &reshape, &mul},
          .links = {1, 0, 0, 1},
          .bind = [](absl::Span<const FusedNode> nodes) -> KernelFn {
            if (nodes.size() != 5) return nullptr;
            for (const FusedNode& n : nodes) {
              if (GetAttrOr<DataType>(*n.attrs, "T", DT_FLOAT) != DT_FLOAT) {
                return nullptr;
              }
            }
            return BindFusedLossGradient(
                {.mul_name = std::string(nodes[1].name),
                 .real_div_name = std::string(nodes[2].name),
                 .reshape_name = std::string(nodes[3].name)});
          }};
}

FusionRule FusedSizeCastRule(const OpDef& size, const OpDef& cast) {
  return {.chain = {&size, &cast},
          .bind = [](absl::Span<const FusedNode> nodes) -> KernelFn {
            if (nodes.size() != 2) return nullptr;
            const DataType size_type =
                GetAttrOr<DataType>(*nodes[0].attrs, "out_type", DT_INT32);
            const DataType cast_to =
                GetAttrOr<DataType>(*nodes[1].attrs, "DstT", DT_INVALID);
            const bool counted = size_type == DT_INT32 || size_type == DT_INT64;
            const bool converted = cast_to == DT_FLOAT || cast_to == DT_INT32 ||
                                   cast_to == DT_INT64;
            if (!counted || !converted) return nullptr;
            return BindFusedSizeCast(size_type, cast_to);
          }};
}

FusionRule FusedScaleVariableRule(const OpDef& read, const OpDef& mul,
                                  const OpDef& assign) {
  return {
      .chain = {&read, &mul, &assign},
      .links = {0, 1},
      .bind = [](absl::Span<const FusedNode> nodes) -> KernelFn {
        if (nodes.size() != 3) return nullptr;
        const bool floats =
            GetAttrOr<DataType>(*nodes[0].attrs, "dtype", DT_INVALID) ==
                DT_FLOAT &&
            GetAttrOr<DataType>(*nodes[1].attrs, "T", DT_INVALID) == DT_FLOAT &&
            GetAttrOr<DataType>(*nodes[2].attrs, "dtype", DT_INVALID) ==
                DT_FLOAT;
        if (!floats) return nullptr;
        return BindFusedScaleVariable({.read_name = std::string(nodes[0].name),
                                       .mul_name = std::string(nodes[1].name)});
      }};
}

}  // namespace graphgc
