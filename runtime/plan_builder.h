// runtime/plan_builder.h
//
// exec::BuildPlan: turns a Run's (feeds, fetches, targets) into an
// exec::Plan (runtime/plan.h). It holds the graph's lock shared for the
// whole build and runs these passes in this order, each a free function
// below over one PlanBuild:
//   1. AddFeeds(): after it, every feed has its slot ([0, feeds.size()), in
//      order) and its FeedCheck, and `fed` / `fed_nodes` say what is fed.
//   2. WalkSubgraph(): after it, plan.steps holds every node the fetches
//      and targets need through data and control inputs (stopping at fed
//      outputs, and at nodes with a fed output for control inputs), in
//      topological order (plan invariant 1), each with its id and
//      num_outputs; plan.ids names the feeds' and steps' nodes; step_of maps
//      each step's slot index to its position.
//   3. AssignSlots(): after it, each step has its output_base, num_slots is
//      final and output_checks has one entry per slot (invariant 2); the
//      steps' nodes are recorded in plan.pointers.
//   4. BindKernelsAndFold(): after it, every step's inputs are wired
//      (InputRef slots, the producers' resources), its kernel is bound and
//      its kind set; what needs no kernel per run (Consts, constant inputs
//      folded, shape-only ops of static shapes) is computed into
//      plan.constants and read in place (invariant 3).
//   5. FuseChains(): after it, every chain of kRun steps that a fusion
//      rule of its first node's OpDef matches (runtime/fusion.h: the OpDefs
//      in order, each intermediate read only by the next step of the chain,
//      at the rule's link input, no fetch of it, no step waiting on it
//      through a control input) runs as one fused step at the chain's last
//      node (Step::fused) with the kernel the rule binds, reading the
//      chain's other inputs; the chain's other steps are kSkip with no
//      inputs. Rules are tried longest first and heads in step order, and
//      a step is in one chain at most. Fused or not, a run computes the
//      same values (invariant 3). The graph is not changed: exported
//      GraphDefs keep the plain ops. A graph whose OpDefs carry no rule is
//      left as it is.
//   6. FindLastUses(): after it, the fetches have their slots (or
//      constants), and InputRef::take is set on the last reader of every
//      slot that no fetch reads (invariant 4, first half).
//   7. MarkForwarding(): after it, each step lists the slots it takes and
//      the inputs a kernel may take over as outputs (invariant 4).
//   8. StampPlan(): after it, edge_counts has each id's edges and
//      current_as_of the heap's structure_version(): the plan is current
//      (invariants 6 and 7) until a node it names is swept or gains an
//      input.
//
// Errors name the node or the Run argument ("fetch 2"): an empty Output or
// one of another graph, a swept node, an output index out of range, a feed
// that is a resource or fed twice, an unfed feed point (a Placeholder), a
// cycle, a kernel that fails while folding. What a node is to the plan comes
// from its OpDef (OpDef::Dispatch, stateful, shape_only), never its op name.
// Nothing is cached on error.
//
// Thread safety: the passes need the graph's heap lock held at least shared
// (BuildPlan takes it); the plan is private to the build until returned.
#ifndef GRAPHGC_RUNTIME_PLAN_BUILDER_H_
#define GRAPHGC_RUNTIME_PLAN_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/graph.h"
#include "runtime/plan.h"
#include "runtime/tensor.h"

namespace Eigen {
struct ThreadPoolDevice;  // a struct in Eigen
}  // namespace Eigen

namespace graphgc {
namespace exec {

using Feeds = std::vector<std::pair<Output, Tensor>>;

// The plan being built and what the passes hand one another.
struct PlanBuild {
  explicit PlanBuild(const Graph& g) : graph(g), plan(new Plan) {}

  const Graph& graph;
  std::unique_ptr<Plan> plan;
  // OutputKey(id, index) of each fed output -> its slot.
  absl::flat_hash_map<uint64_t, uint32_t> fed;
  // Slot indices of nodes with an output fed: done, for control inputs.
  absl::flat_hash_set<uint32_t> fed_nodes;
  // Slot index of each step's node -> its position in plan.steps.
  absl::flat_hash_map<uint32_t, uint32_t> step_of;
  // Per plan slot: index in plan.constants of its value when the plan
  // computes it once, or -1.
  std::vector<int32_t> constant_of;
};

// The key of output `index` of node `id` in PlanBuild::fed.
uint64_t OutputKey(NodeId id, int index);

// Checks an Output given to Run; `what` is "fetch 2", "feed 0", ...; with
// `need_index`, that its index names an output of its node.
absl::Status CheckRunOutput(const Graph& graph, const Output& o,
                            const std::string& what, bool need_index = true)
    ABSL_SHARED_LOCKS_REQUIRED(graph.heap().mu());

// Pass 1 (see the top of this file).
absl::Status AddFeeds(PlanBuild& b, const Feeds& feeds)
    ABSL_SHARED_LOCKS_REQUIRED(b.graph.heap().mu());
// Pass 2.
absl::Status WalkSubgraph(PlanBuild& b, const std::vector<Output>& fetches,
                          const std::vector<Output>& targets)
    ABSL_SHARED_LOCKS_REQUIRED(b.graph.heap().mu());
// Pass 3.
void AssignSlots(PlanBuild& b) ABSL_SHARED_LOCKS_REQUIRED(b.graph.heap().mu());
// Pass 4. `device` runs the kernels folded now.
absl::Status BindKernelsAndFold(PlanBuild& b,
                                const Eigen::ThreadPoolDevice* device)
    ABSL_SHARED_LOCKS_REQUIRED(b.graph.heap().mu());
// Pass 5.
void FuseChains(PlanBuild& b, const std::vector<Output>& fetches)
    ABSL_SHARED_LOCKS_REQUIRED(b.graph.heap().mu());
// Pass 6.
void FindLastUses(PlanBuild& b, const std::vector<Output>& fetches);
// Pass 7.
void MarkForwarding(Plan& plan);
// Pass 8.
void StampPlan(PlanBuild& b) ABSL_SHARED_LOCKS_REQUIRED(b.graph.heap().mu());

// Runs passes 1-8 under the graph's lock and returns the plan.
absl::StatusOr<std::shared_ptr<const Plan>> BuildPlan(
    const Graph& graph, const Eigen::ThreadPoolDevice* device,
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets);

}  // namespace exec
}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_PLAN_BUILDER_H_
