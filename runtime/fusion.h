// runtime/fusion.h
//
// FusionRule: a chain of ops that a plan may run as one kernel, as
// TensorFlow's remapper runs MatMul -> BiasAdd -> Relu as _FusedMatMul, but
// in the plan only: the graph, and every GraphDef exported from it, keeps
// the plain ops. The op library owns the rules (ops/ registers its own with
// OpRegistry::RegisterFusion) and each rule sits on the OpDef of its
// chain's first op (OpDef::fusions); the plan builder (exec::FuseChains,
// runtime/plan_builder.h) applies whichever rules the nodes' OpDefs carry.
// Ops are matched by OpDef identity, never by op name, so a graph built
// from a registry without a rule runs unfused.
//
// A rule's chain c[0] -> ... -> c[n-1] matches steps v[0], ..., v[n-1] of
// a plan when each v[k] runs a kernel every run and its node's OpDef is
// c[k], v[k+1] reads v[k]'s output 0 as its link input (input links[k],
// or input 0 when the rule has no links) and is its only reader (no other
// step, input or fetch reads any output of v[k] for k < n-1), and no step
// waits on v[0], ..., v[n-2] through a control input. The fused step runs
// at v[n-1], produces v[n-1]'s outputs, and reads the chain's other data
// inputs in order: all of v[0]'s, then each later v[k]'s but its link.
// Fused or not, a run must compute the same values, bit for bit.
//
// Example (ops/fused_kernels.cc):
//   FusionRule rule{.chain = {&matmul, &bias_add, &relu},
//                   .bind = [](absl::Span<const FusedNode> nodes) {...}};
//   GG_RETURN_IF_ERROR(registry.RegisterFusion(std::move(rule)));
//
// Thread safety: rules are immutable once registered.
#ifndef GRAPHGC_RUNTIME_FUSION_H_
#define GRAPHGC_RUNTIME_FUSION_H_

#include <functional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/attr_value.h"
#include "runtime/op_def.h"

namespace graphgc {

// What a rule's binder sees of one node of a matched chain: its name (for
// the fused kernel's errors) and its attributes. Valid during the call.
struct FusedNode {
  absl::string_view name;
  const AttrMap* attrs = nullptr;
};

struct FusionRule {
  // The chain's ops, first to last; at least two.
  std::vector<const OpDef*> chain;
  // links[k]: which input of chain[k + 1]'s node reads chain[k]'s output 0
  // (e.g. 1 for Mul(y, x) after x's op). Empty: input 0 at every link;
  // otherwise one per link, chain.size() - 1 of them, each >= 0.
  std::vector<int> links;
  // The fused kernel for a matched chain, given its nodes in chain order;
  // an empty KernelFn leaves the chain unfused (attributes the fused kernel
  // does not handle). It must fail where the plain kernels would, with
  // their messages.
  std::function<KernelFn(absl::Span<const FusedNode> nodes)> bind;
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_FUSION_H_
