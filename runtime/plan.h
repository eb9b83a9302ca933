// runtime/plan.h
//
// exec::Plan: what a Session runs for one (feeds, fetches, targets)
// combination, built once by exec::BuildPlan (runtime/plan_builder.h) and
// run by exec::Executor (runtime/executor.h) as often as the combination
// comes back. A plan names nodes by NodeId and tensors by slot number: a
// run's tensors live in one vector of slots, indexed by the numbers below.
//
// Invariants (established by BuildPlan's passes, relied on by the executor):
//  1. steps are in topological order: every input a step reads that is
//     neither fed nor constant is an output of an earlier step.
//  2. Slots [0, feeds.size()) are the feeds, in the order of the Run's feeds.
//     Step s's outputs are slots [output_base, output_base + num_outputs);
//     these ranges follow one another in step order and end at num_slots.
//     output_checks has one entry per slot (DT_INVALID for a feed slot).
//  3. Step s reads inputs[input_begin, input_begin + num_inputs), one per
//     data input of its node, or for a fused step (Step::fused) one per
//     data input of the chain it runs but the links (runtime/fusion.h);
//     the chain's other steps are kSkip and read nothing. An InputRef with
//     constant >= 0 reads constants[constant] in place: its slot is never
//     filled by any run. A kConstant step's outputs are all in constants, so no
//     run touches it.
//  4. A slot is taken (InputRef::take) by its last reader only, and never
//     when a fetch reads it. takes[take_begin, take_begin + num_takes) lists
//     the slots step s takes; bit k of forwardable is set only if input k is
//     taken and no other input of the step reads its slot.
//  5. ids names every node the plan reads (feeds' nodes, then the steps'):
//     the plan holds no handle, so a cached plan keeps nothing alive. The
//     steps' Node and their inputs' NodeResource pointers are reachable only
//     through a PinnedRun, which first pins every id in ids (this is the
//     only way to reach them, so no pointer is read after a sweep).
//  6. A plan is current while every node in ids is live and has the inputs
//     (edge_counts) it had when the plan was built: nodes are never changed
//     but by gaining a control input, so the plan's walk, slots and kernels
//     are still right. PlanIsCurrent() is the one check, and PinnedRun::Pin
//     the one caller that runs a plan: it pins a plan only if it is current.
//  7. The check is one comparison while nothing changed: current_as_of is
//     a gc::Heap::structure_version() at which the plan was current (the
//     build's, to start with). While the heap's is still that, no slot was
//     freed and no edge added, so every node is as it was. Otherwise the ids
//     are checked one by one, and current_as_of moves on if they pass.
//  8. Immutable once built, and shared by concurrent runs; current_as_of is
//     the one mutable field, written only with the heap's mutex held.
//
// Thread safety: a Plan is immutable but for current_as_of (8); a PinnedRun
// belongs to one run.
#ifndef GRAPHGC_RUNTIME_PLAN_H_
#define GRAPHGC_RUNTIME_PLAN_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gc/node_id.h"
#include "gc/pin.h"
#include "runtime/graph.h"
#include "runtime/node.h"
#include "runtime/op_def.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace exec {

inline constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();

// One node to run: where its inputs come from and where its outputs go.
struct Step {
  NodeId id;
  // The op's kernel, copied from its OpDef (or bound to the node's
  // attributes, OpDef::bind) when the plan is built; empty when the op has
  // none. The plan's steps are walked in order, while reaching each OpDef
  // (and the node) missed cache on most steps.
  KernelFn kernel;
  uint32_t input_begin = 0;  // first entry in Plan::inputs
  uint32_t num_inputs = 0;
  uint32_t output_base = 0;  // its output k goes to slot output_base + k
  uint32_t num_outputs = 0;
  // The slots this step reads last (InputRef::take), cleared once its
  // kernel returns: Plan::takes[take_begin, take_begin + num_takes).
  uint32_t take_begin = 0;
  uint32_t num_takes = 0;
  // Bit k: input k is taken and no other input of the step reads its
  // slot, so the kernel may take the tensor over as an output
  // (OpKernelContext::forward_input_or_allocate_output). Inputs below 32.
  uint32_t forwardable = 0;
  // kRun: run the kernel. kConstant: nothing to run; the kernel's outputs
  // were computed when the plan was built (Plan::constants, which readers
  // and fetches reach through InputRef::constant). kSkip: nothing to run
  // (OpDef::Dispatch::kNothing, resource handles).
  enum class Kind : uint8_t { kRun, kConstant, kSkip };
  Kind kind = Kind::kRun;
  // The step runs a chain ending at its node in one kernel (a FusionRule's,
  // runtime/fusion.h, e.g. MatMul -> BiasAdd -> Relu); its outputs are the
  // node's.
  bool fused = false;
};

struct InputRef {
  uint32_t slot = 0;
  // The last reader of a slot no fetch needs clears the slot once its
  // kernel returns, so intermediate buffers are freed as early as possible.
  bool take = false;
  // Index in Plan::constants of the input's value when the plan computed
  // it once (a Const's or a folded step's output), or -1. Kernels read such
  // an input in place: its slot is never filled, and no run copies it.
  int32_t constant = -1;
};

// What a step's output must be: its node's output dtype and static shape,
// copied next to the plan's other per-step data (DT_INVALID for a fed
// slot, which no kernel writes).
struct OutputCheck {
  DataType dtype = DT_INVALID;
  TensorShape shape;
};

struct FeedCheck {
  uint32_t slot = 0;
  DataType dtype = DT_INVALID;
  TensorShape shape;
  std::string name;  // "x:0"
};

// The Node of every step and the NodeResource of every input (the
// producer's, e.g. a variable's state, or nullptr), recorded while the plan
// is built under the graph's lock. Write-only here: only a PinnedRun, which
// holds a pin on the plan's nodes, reads them (invariant 5).
class NodePointers {
 public:
  void AddStep(const Node* node) { nodes_.push_back(node); }
  void AddInput(NodeResource* resource) { resources_.push_back(resource); }

 private:
  friend class PinnedRun;
  std::vector<const Node*> nodes_;        // per step
  std::vector<NodeResource*> resources_;  // per Plan::inputs entry
};

// An execution plan; see the invariants at the top of this file.
struct Plan {
  std::vector<NodeId> ids;  // every node the plan names (pinned per run)
  std::vector<Step> steps;  // topological order
  std::vector<InputRef> inputs;
  std::vector<uint32_t> takes;             // slots, per Step::take_begin
  std::vector<OutputCheck> output_checks;  // per slot
  std::vector<FeedCheck> feeds;            // in the order of the Run's feeds
  std::vector<uint32_t> fetch_slots;
  std::vector<int32_t> fetch_constants;  // as InputRef::constant, per fetch
  std::vector<Tensor> constants;         // outputs of the kConstant steps
  uint32_t num_slots = 0;
  uint32_t max_inputs = 0;
  NodePointers pointers;
  // Per ids entry: the node's edges (data and control inputs) when built.
  std::vector<uint32_t> edge_counts;
  // The heap's structure_version() when the plan was last found current
  // (invariant 7).
  mutable std::atomic<int64_t> current_as_of{-1};
};

// Whether `plan` is current in `heap` (invariant 6): OK at once when the
// heap's structure_version() is the plan's current_as_of; otherwise every id
// is checked, and on success current_as_of becomes the heap's version.
// NotFound naming the first node that was swept, FailedPrecondition naming
// the first that gained an input: the plan must be built again.
absl::Status PlanIsCurrent(const gc::Heap& heap, const Plan& plan)
    ABSL_SHARED_LOCKS_REQUIRED(heap.mu());

// PinnedRun: one run's hold on a plan. While it lives every node the plan
// names is pinned (a collection cannot sweep it), and only while it lives
// does it hand out the steps' Node and the inputs' NodeResource pointers.
// Move-only; unpins on destruction.
class PinnedRun {
 public:
  // Pins plan->ids in `graph` if the plan is current (PlanIsCurrent, under
  // the same lock); otherwise its error, pinning nothing, and the caller
  // builds the plan again.
  static absl::StatusOr<PinnedRun> Pin(const Graph& graph,
                                       std::shared_ptr<const Plan> plan);

  PinnedRun(PinnedRun&&) = default;
  PinnedRun& operator=(PinnedRun&&) = default;

  const Plan& plan() const { return *plan_; }
  // The node of step `step`.
  const Node& node(size_t step) const { return *plan_->pointers.nodes_[step]; }
  // The resources of Plan::inputs from entry `input_begin` on.
  NodeResource* const* resources(uint32_t input_begin) const {
    return plan_->pointers.resources_.data() + input_begin;
  }
  // Every step's node and every input's resource, as above, for a loop over
  // the steps: read once, where the accessors above are read again after
  // every kernel call (the compiler cannot know a kernel left them alone).
  absl::Span<const Node* const> nodes() const { return plan_->pointers.nodes_; }
  absl::Span<NodeResource* const> all_resources() const {
    return plan_->pointers.resources_;
  }

 private:
  PinnedRun(std::shared_ptr<const Plan> plan, gc::PinScope pin)
      : plan_(std::move(plan)), pin_(std::move(pin)) {}

  std::shared_ptr<const Plan> plan_;
  gc::PinScope pin_;
};

// A kernel's failure, named for its node: kernels normally name it
// (OpKernelContext::InvalidArgument); one that did not gets it prefixed,
// keeping the code.
absl::Status KernelError(const Node& node, const absl::Status& s);

// Whether a kernel's output `t` is what `check`, the plan's copy of its
// node's declared dtype and static shape, allows. Inline: the executor
// tests every output of every step with it.
inline bool OutputMatches(const OutputCheck& check, const Tensor& t) {
  return check.dtype == DT_RESOURCE ||  // the consumer reads the resource
         (t.dtype() == check.dtype && check.shape.IsCompatibleWith(t.shape()));
}

// Checks a kernel's outputs against `checks` (OutputMatches); Internal,
// naming the node, output and both types, for the first that fails.
absl::Status CheckOutputs(const Node& node,
                          absl::Span<const OutputCheck> checks,
                          absl::Span<const Tensor> outs);

}  // namespace exec
}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_PLAN_H_
