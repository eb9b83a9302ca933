// ops/fused_training_kernels.h
//
// Kernels a plan runs in place of the small chains that gradients and
// optimizers build around a training step's products (as
// ops/fused_kernels.h does for the Dense layer's chains, and in the plan
// only: the graph, and every GraphDef exported from it, keeps the plain
// ops), and the fusion rules (runtime/fusion.h) that bind them. Each saves
// the executor steps, output tensors and kernel calls of all but one of
// its ops. RegisterCoreOps registers the rules with the core ops; the plan
// builder's FuseChains pass (runtime/plan_builder.h) applies them.
//
// FusedLossGradient runs as one step the five kernels that the gradients
// of Mean and of SparseSoftmaxCrossEntropyWithLogits build for a mean
// loss (ReduceGrad, XentGrad):
//   Mul(backprop, Reshape(RealDiv(Mul(g, OnesLike(x)), d), shape)).
// With g and d of one value each (a scalar loss's gradient, the batch
// size), every value of the reshaped quotient is the one number
// (g * 1) / d, so the result is backprop times that number, written over
// backprop when the plan hands it over. The same float operations on the
// same operands, so bit for bit what the five kernels compute.
//
// FusedSizeCast runs Cast(Size(x)) (the count Mean's gradient divides by)
// as one step: the element count of x as Size's out_type holds it, then
// converted as Cast converts it.
//
// FusedScaleVariable runs AssignVariableOp(v, Mul(ReadVariableOp(v'), c))
// (Adam's beta powers advanced once per step) as one step: the read, the
// product and the assignment as the three kernels do them, each variable
// locked as long as its own kernel would lock it.
//
// Thread safety: a bound kernel is immutable and may run on many threads.
#ifndef GRAPHGC_OPS_FUSED_TRAINING_KERNELS_H_
#define GRAPHGC_OPS_FUSED_TRAINING_KERNELS_H_

#include <string>

#include "runtime/fusion.h"
#include "runtime/op_def.h"

namespace graphgc {

// What a fused loss-gradient chain's errors name: the nodes of its first
// Mul, its RealDiv and its Reshape (the last Mul is the fused step's own
// node, which the kernel's context names).
struct FusedLossGradientSpec {
  std::string mul_name;
  std::string real_div_name;
  std::string reshape_name;
};

// The kernel of a fused OnesLike -> Mul -> RealDiv -> Reshape -> Mul chain:
// inputs (x, g, d, shape, backprop), one float output, the last Mul's.
// Shapes one of the five kernels would refuse are InvalidArgument with that
// kernel's message, naming its node ("RealDiv 'gradients/RealDiv':
// incompatible shapes ..."); g or d of several values are computed as the
// kernels compute them, one intermediate after another.
KernelFn BindFusedLossGradient(FusedLossGradientSpec spec);

// The rule OnesLike -> Mul (reading it as input 1) -> RealDiv (input 0) ->
// Reshape (input 0) -> Mul (input 1) over these OpDefs (a registry's),
// binding BindFusedLossGradient with the nodes' names; a chain of another
// dtype than float is left unfused.
FusionRule FusedLossGradientRule(const OpDef& ones_like, const OpDef& mul,
                                 const OpDef& real_div, const OpDef& reshape);

// The kernel of a fused Size -> Cast chain: input x, one scalar output of
// `cast_to` (float or int32/int64), the count of x's elements converted
// first to `size_type` (Size's out_type, int32 or int64) and then to
// cast_to, bit for bit as the two kernels convert it.
KernelFn BindFusedSizeCast(DataType size_type, DataType cast_to);

// The rule Size -> Cast over these OpDefs (a registry's), binding
// BindFusedSizeCast; a Size of another out_type than int32 or int64, or a
// Cast to another type than float, int32 or int64, is left unfused.
FusionRule FusedSizeCastRule(const OpDef& size, const OpDef& cast);

// What a fused ReadVariableOp -> Mul -> AssignVariableOp chain's errors
// name: the read's and the Mul's nodes (the assignment is the fused step's
// own).
struct FusedScaleVariableSpec {
  std::string read_name;
  std::string mul_name;
};

// The kernel of a fused ReadVariableOp -> Mul -> AssignVariableOp chain:
// inputs (the read's variable, the factor, the assigned variable), no
// output. Reads the first variable, multiplies as Mul does (broadcasting
// the factor) and assigns the product to the second; fails where one of
// the three kernels would, with its message, naming its node.
KernelFn BindFusedScaleVariable(FusedScaleVariableSpec spec);

// The rule ReadVariableOp -> Mul (reading it as input 0) ->
// AssignVariableOp (as its value, input 1) over these OpDefs (a
// registry's), binding BindFusedScaleVariable; a chain of another dtype
// than float is left unfused.
FusionRule FusedScaleVariableRule(const OpDef& read, const OpDef& mul,
                                  const OpDef& assign);

}  // namespace graphgc

#endif  // GRAPHGC_OPS_FUSED_TRAINING_KERNELS_H_
