// ops/fused_kernels.cc
#include "ops/fused_kernels.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "ops/small_gemm.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// out[r, j] = act(out[r, j] + bias[j]) for `rows` rows of c values, in
// place: whole packets along each row, then the row's tail one value at a
// time (an overlapping last packet would add the bias twice in place).
template <FusedActivation kAct>
void AddBiasAndActivate(const float* bias, int64_t rows, int64_t c,
                        float* out) {
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<float>::type;
  constexpr int64_t kPacket = ei::packet_traits<float>::size;
  const Packet zero = ei::pset1<Packet>(0.f);
  const int64_t whole = c - c % kPacket;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = out + r * c;
    for (int64_t j = 0; j < whole; j += kPacket) {
      Packet v =
          ei::padd(ei::ploadu<Packet>(row + j), ei::ploadu<Packet>(bias + j));
      if constexpr (kAct == FusedActivation::kRelu) v = ei::pmax(v, zero);
      ei::pstoreu(row + j, v);
    }
    for (int64_t j = whole; j < c; ++j) {
      const float v = row[j] + bias[j];
      row[j] = kAct == FusedActivation::kRelu ? std::max(v, 0.f) : v;
    }
  }
}

// The product op(a) op(b) of inputs 0 and 1, computed into output 0 as
// the MatMul kernel computes it, with its checks and messages (naming
// `matmul_name`).
struct Product {
  float* out = nullptr;  // m x n, row-major
  int64_t m = 0, n = 0;
};
absl::StatusOr<Product> MultiplyInto(OpKernelContext& ctx, bool ta, bool tb,
                                     const std::string& matmul_name) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  auto matmul_error = [&](const std::string& message) {
    return absl::InvalidArgumentError(
        absl::StrCat("MatMul '", matmul_name, "': ", message));
  };
  if (a.shape().dims() != 2 || b.shape().dims() != 2) {
    return matmul_error(absl::StrCat("needs matrices, got ",
                                     a.shape().DebugString(), " and ",
                                     b.shape().DebugString()));
  }
  Product p;
  p.m = a.shape()[ta ? 1 : 0];
  const int64_t ka = a.shape()[ta ? 0 : 1];
  const int64_t kb = b.shape()[tb ? 1 : 0];
  p.n = b.shape()[tb ? 0 : 1];
  if (ka != kb) {
    return matmul_error(absl::StrCat("inner dimensions ", ka, " vs ", kb,
                                     " (a ", a.shape().DebugString(), ", b ",
                                     b.shape().DebugString(), ")"));
  }
  GG_ASSIGN_OR_RETURN(Tensor * out,
                      ctx.allocate_output(0, DT_FLOAT, TensorShape{p.m, p.n}));
  p.out = out->mutable_data<float>().data();
  gemm::MatMul(a.data<float>().data(), b.data<float>().data(), p.out, p.m, p.n,
               ka, ta, tb);
  return p;
}

absl::Status FusedMatMulKernel(const FusedMatMulSpec& spec,
                               OpKernelContext& ctx) {
  GG_ASSIGN_OR_RETURN(
      Product p,
      MultiplyInto(ctx, spec.transpose_a, spec.transpose_b, spec.matmul_name));
  const Tensor& bias = ctx.input(2);
  if (bias.shape().dims() != 1 || bias.shape()[0] != p.n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "BiasAdd '", spec.bias_add_name, "': bias of shape ",
        bias.shape().DebugString(), " does not match value of shape ",
        TensorShape{p.m, p.n}.DebugString()));
  }
  const float* bp = bias.data<float>().data();
  if (spec.activation == FusedActivation::kRelu) {
    AddBiasAndActivate<FusedActivation::kRelu>(bp, p.m, p.n, p.out);
  } else {
    AddBiasAndActivate<FusedActivation::kNone>(bp, p.m, p.n, p.out);
  }
  return absl::OkStatus();
}

absl::Status FusedMatMulReluGradKernel(const FusedMatMulReluGradSpec& spec,
                                       OpKernelContext& ctx) {
  GG_ASSIGN_OR_RETURN(
      Product p,
      MultiplyInto(ctx, spec.transpose_a, spec.transpose_b, spec.matmul_name));
  const Tensor& features = ctx.input(2);
  const TensorShape shape{p.m, p.n};
  if (features.shape() != shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ReluGrad '", spec.relu_grad_name, "': gradients ", shape.DebugString(),
        " and features ", features.shape().DebugString(), " differ in shape"));
  }
  // ReluGrad's values: the gradient where the feature is > 0, else 0 (a
  // NaN feature gives 0), as its select does.
  const float* f = features.data<float>().data();
  for (int64_t i = 0; i < p.m * p.n; ++i) {
    p.out[i] = f[i] > 0.0f ? p.out[i] : 0.0f;
  }
  return absl::OkStatus();
}

}  // namespace

KernelFn BindFusedMatMul(FusedMatMulSpec spec) {
  return [spec = std::move(spec)](OpKernelContext& ctx) {
    return FusedMatMulKernel(spec, ctx);
  };
}

KernelFn BindFusedMatMulReluGrad(FusedMatMulReluGradSpec spec) {
  return [spec = std::move(spec)](OpKernelContext& ctx) {
    return FusedMatMulReluGradKernel(spec, ctx);
  };
}

namespace {

// A matched chain's MatMul (its first node) as the fused kernels see it;
// nullopt when a node of the chain computes in another dtype than float,
// the only one they take (the chain then runs unfused).
struct ChainMatMul {
  bool transpose_a = false;
  bool transpose_b = false;
  std::string name;
};
std::optional<ChainMatMul> FloatChainMatMul(absl::Span<const FusedNode> nodes) {
  for (const FusedNode& n : nodes) {
    if (GetAttrOr<DataType>(*n.attrs, "T", DT_FLOAT) != DT_FLOAT) {
      return std::nullopt;
    }
  }
  const AttrMap& attrs = *nodes[0].attrs;
  return ChainMatMul{GetAttrOr<bool>(attrs, "transpose_a", false),
                     GetAttrOr<bool>(attrs, "transpose_b", false),
                     std::string(nodes[0].name)};
}

}  // namespace

FusionRule FusedMatMulReluGradRule(const OpDef& matmul,
                                   const OpDef& relu_grad) {
  return {.chain = {&matmul, &relu_grad},
          .bind = [](absl::Span<const FusedNode> nodes) -> KernelFn {
            std::optional<ChainMatMul> mm = FloatChainMatMul(nodes);
            if (!mm.has_value()) return nullptr;
            return BindFusedMatMulReluGrad(
                {.transpose_a = mm->transpose_a,
                 .transpose_b = mm->transpose_b,
                 .matmul_name = std::move(mm->name),
                 .relu_grad_name = std::string(nodes[1].name)});
          }};
}

std::vector<FusionRule> FusedMatMulRules(const OpDef& matmul,
                                         const OpDef& bias_add,
                                         const OpDef& relu) {
  auto binder = [](FusedActivation activation) {
    return [activation](absl::Span<const FusedNode> nodes) -> KernelFn {
      std::optional<ChainMatMul> mm = FloatChainMatMul(nodes);
      if (!mm.has_value()) return nullptr;
      return BindFusedMatMul({.transpose_a = mm->transpose_a,
                              .transpose_b = mm->transpose_b,
                              .activation = activation,
                              .matmul_name = std::move(mm->name),
                              .bias_add_name = std::string(nodes[1].name)});
    };
  };
  std::vector<FusionRule> rules;
  rules.push_back({.chain = {&matmul, &bias_add, &relu},
                   .bind = binder(FusedActivation::kRelu)});
  rules.push_back(
      {.chain = {&matmul, &bias_add}, .bind = binder(FusedActivation::kNone)});
  return rules;
}

}  // namespace graphgc
