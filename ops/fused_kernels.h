// ops/fused_kernels.h
//
// Kernels that a plan runs in place of a chain of nodes (TensorFlow's
// remapper and its _FusedMatMul, but in the plan only: the graph, and every
// GraphDef exported from it, keeps the plain ops), and the fusion rules
// (runtime/fusion.h) that bind them. RegisterCoreOps registers the rules
// with the core ops; the plan builder's FuseChains pass
// (runtime/plan_builder.h) applies them.
//
// FusedMatMul computes act(op(a) op(b) + bias) for MatMul -> BiasAdd ->
// (Relu | nothing): the product (gemm::MatMul, as the MatMul kernel), with
// bias and activation applied to each block of the output while it is in
// registers (gemm::MatMulWithEpilogue), so the output is written once.
// Its values are those of the three kernels run one after the other, bit
// for bit: the same product, then the same float addition, then max(v, 0).
// FusedMatMulReluGrad does the same for MatMul -> ReluGrad (the backward
// chain): the product, then the ReLU mask in the same pass.
//
// Thread safety: a bound kernel is immutable and may run on many threads.
#ifndef GRAPHGC_OPS_FUSED_KERNELS_H_
#define GRAPHGC_OPS_FUSED_KERNELS_H_

#include <string>
#include <vector>

#include "runtime/fusion.h"
#include "runtime/op_def.h"

namespace graphgc {

enum class FusedActivation { kNone, kRelu };

// What a fused MatMul chain does, from its nodes' attributes, and the
// names its errors use.
struct FusedMatMulSpec {
  bool transpose_a = false;
  bool transpose_b = false;
  FusedActivation activation = FusedActivation::kNone;
  std::string matmul_name;    // the MatMul node's, for its shape errors
  std::string bias_add_name;  // the BiasAdd node's
};

// The kernel of a fused chain: inputs (a, b, bias), one float output
// [m, n]. Inputs that MatMul or BiasAdd would refuse are InvalidArgument
// with that kernel's message, naming that node ("MatMul 'dense/MatMul':
// inner dimensions 3 vs 4 ...").
KernelFn BindFusedMatMul(FusedMatMulSpec spec);

// What a fused MatMul -> ReluGrad chain does (the backward pass of a Dense
// layer under a ReLU: the gradient of the ReLU's output, MatMul(dy, w^T),
// masked by the ReLU's output), and the names its errors use.
struct FusedMatMulReluGradSpec {
  bool transpose_a = false;
  bool transpose_b = false;
  std::string matmul_name;     // the MatMul node's
  std::string relu_grad_name;  // the ReluGrad node's
};

// The kernel of a fused MatMul -> ReluGrad chain: inputs (a, b, features),
// one float output [m, n]: op(a) op(b) where features > 0, else 0, bit for
// bit what the two kernels compute. Inputs either kernel would refuse are
// InvalidArgument with that kernel's message, naming that node.
KernelFn BindFusedMatMulReluGrad(FusedMatMulReluGradSpec spec);

// The rule MatMul -> ReluGrad over these OpDefs (a registry's), binding
// BindFusedMatMulReluGrad; a chain of another dtype than float is left
// unfused.
FusionRule FusedMatMulReluGradRule(const OpDef& matmul, const OpDef& relu_grad);

// The rules MatMul -> BiasAdd -> Relu and MatMul -> BiasAdd over these
// OpDefs (a registry's), binding BindFusedMatMul with the MatMul's
// transposes and the nodes' names; a chain of another dtype than float is
// left unfused.
std::vector<FusionRule> FusedMatMulRules(const OpDef& matmul,
                                         const OpDef& bias_add,
                                         const OpDef& relu);

}  // namespace graphgc

#endif  // GRAPHGC_OPS_FUSED_KERNELS_H_
