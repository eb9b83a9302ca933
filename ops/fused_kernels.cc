// ops/fused_kernels.cc
#include "ops/fused_kernels.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/parallel.h"
#include "ops/small_gemm.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// The product op(a) op(b) of inputs 0 and 1 as the MatMul kernel checks
// it, with its messages (naming `matmul_name`), and output 0 allocated for
// it; Multiply computes it.
struct Product {
  float* out = nullptr;  // m x n, row-major
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
};
absl::StatusOr<Product> PrepareProduct(OpKernelContext& ctx, bool ta, bool tb,
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
  p.k = ka;
  p.ta = ta;
  p.tb = tb;
  return p;
}

// Computes `p` into output 0 as the MatMul kernel computes it (ParallelMatMul),
// with `epilogue` applied to each value (bit for bit the same as a pass
// after it).
void Multiply(OpKernelContext& ctx, const Product& p,
              const gemm::Epilogue& epilogue = {}) {
  op_util::ParallelMatMul(ctx, ctx.input(0).data<float>().data(),
                          ctx.input(1).data<float>().data(), p.out, p.m, p.n,
                          p.k, p.ta, p.tb, epilogue);
}

absl::Status FusedMatMulKernel(const FusedMatMulSpec& spec,
                               OpKernelContext& ctx) {
  GG_ASSIGN_OR_RETURN(Product p,
                      PrepareProduct(ctx, spec.transpose_a, spec.transpose_b,
                                     spec.matmul_name));
  const Tensor& bias = ctx.input(2);
  if (bias.shape().dims() != 1 || bias.shape()[0] != p.n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "BiasAdd '", spec.bias_add_name, "': bias of shape ",
        bias.shape().DebugString(), " does not match value of shape ",
        TensorShape{p.m, p.n}.DebugString()));
  }
  // BiasAdd's addition and Relu's max on each value of the product as the
  // product's register blocks store it: no second pass over the output.
  Multiply(ctx, p,
           {.bias = bias.data<float>().data(),
            .relu = spec.activation == FusedActivation::kRelu});
  return absl::OkStatus();
}

absl::Status FusedMatMulReluGradKernel(const FusedMatMulReluGradSpec& spec,
                                       OpKernelContext& ctx) {
  GG_ASSIGN_OR_RETURN(Product p,
                      PrepareProduct(ctx, spec.transpose_a, spec.transpose_b,
                                     spec.matmul_name));
  Multiply(ctx, p);
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
