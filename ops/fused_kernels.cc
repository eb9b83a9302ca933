// ops/fused_kernels.cc
#include "ops/fused_kernels.h"

#include <algorithm>
#include <cstdint>
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

absl::Status FusedMatMulKernel(const FusedMatMulSpec& spec,
                               OpKernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor& bias = ctx.input(2);
  auto matmul_error = [&](const std::string& message) {
    return absl::InvalidArgumentError(
        absl::StrCat("MatMul '", spec.matmul_name, "': ", message));
  };
  if (a.shape().dims() != 2 || b.shape().dims() != 2) {
    return matmul_error(absl::StrCat("needs matrices, got ",
                                     a.shape().DebugString(), " and ",
                                     b.shape().DebugString()));
  }
  const bool ta = spec.transpose_a, tb = spec.transpose_b;
  const int64_t m = a.shape()[ta ? 1 : 0];
  const int64_t ka = a.shape()[ta ? 0 : 1];
  const int64_t kb = b.shape()[tb ? 1 : 0];
  const int64_t n = b.shape()[tb ? 0 : 1];
  if (ka != kb) {
    return matmul_error(absl::StrCat("inner dimensions ", ka, " vs ", kb,
                                     " (a ", a.shape().DebugString(), ", b ",
                                     b.shape().DebugString(), ")"));
  }
  if (bias.shape().dims() != 1 || bias.shape()[0] != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "BiasAdd '", spec.bias_add_name, "': bias of shape ",
        bias.shape().DebugString(), " does not match value of shape ",
        TensorShape{m, n}.DebugString()));
  }
  GG_ASSIGN_OR_RETURN(Tensor * out,
                      ctx.allocate_output(0, DT_FLOAT, TensorShape{m, n}));
  float* o = out->mutable_data<float>().data();
  gemm::MatMul(a.data<float>().data(), b.data<float>().data(), o, m, n, ka, ta,
               tb);
  const float* bp = bias.data<float>().data();
  if (spec.activation == FusedActivation::kRelu) {
    AddBiasAndActivate<FusedActivation::kRelu>(bp, m, n, o);
  } else {
    AddBiasAndActivate<FusedActivation::kNone>(bp, m, n, o);
  }
  return absl::OkStatus();
}

}  // namespace

KernelFn BindFusedMatMul(FusedMatMulSpec spec) {
  return [spec = std::move(spec)](OpKernelContext& ctx) {
    return FusedMatMulKernel(spec, ctx);
  };
}

std::vector<FusionRule> FusedMatMulRules(const OpDef& matmul,
                                         const OpDef& bias_add,
                                         const OpDef& relu) {
  auto binder = [](FusedActivation activation) {
    return [activation](absl::Span<const FusedNode> nodes) -> KernelFn {
      for (const FusedNode& n : nodes) {
        if (GetAttrOr<DataType>(*n.attrs, "T", DT_FLOAT) != DT_FLOAT) {
          return nullptr;
        }
      }
      const AttrMap& attrs = *nodes[0].attrs;
      return BindFusedMatMul(
          {.transpose_a = GetAttrOr<bool>(attrs, "transpose_a", false),
           .transpose_b = GetAttrOr<bool>(attrs, "transpose_b", false),
           .activation = activation,
           .matmul_name = std::string(nodes[0].name),
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
