// runtime/session.h
//
// Session: runs parts of a Graph. Run(feeds, fetches, targets) computes the
// fetched outputs, running only the nodes they (and the targets) need
// through data and control inputs; a fed output replaces its node for that
// run, so the inputs of a fed node are not run.
//
// Execution plans: the first Run of a (feeds, fetches, targets) combination
// walks the subgraph it needs (never the whole graph), orders it
// topologically and caches the result. A plan holds only NodeIds and
// precomputed tensor-slot numbers, never handles, so a cached plan keeps no
// node alive. A cached plan is run only while it is current (runtime/plan.h,
// invariants 6 and 7: one comparison of the heap's structure version while
// no node was freed and no edge added since it was last found current, a
// check of its ids otherwise); one that is not (a node it names gained an
// input) is evicted and built again. Plans naming swept nodes (their
// combination cannot come back: its ids are dead) are evicted whenever the
// session builds a plan, so the cache holds them only until the next build.
// The pieces: runtime/plan.h (the plan and its invariants),
// runtime/plan_builder.h (BuildPlan's passes, in order), runtime/executor.h
// (runs a plan); this file keeps the cache and Run.
//
// Thread safety: Run may be called concurrently from any number of threads
// on one Session; concurrent runs share cached plans but each has its own
// tensors. While a Run executes, the nodes of its plan are pinned
// (exec::PinnedRun): a Collect() meanwhile cannot sweep them. A collection
// waits only for plan building and pinning (both hold the graph's lock shared
// for a time proportional to the plan), never for kernels, which run without
// any graph lock. Kernels must not call back into the graph (see
// runtime/op_def.h). A Session may outlive its Graph only to be destroyed
// (see runtime/graph.h).
//
// Example:
//   Session session(g);
//   std::vector<Tensor> out = session.Run({{x, xt}}, {y}).value();
#ifndef GRAPHGC_RUNTIME_SESSION_H_
#define GRAPHGC_RUNTIME_SESSION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/graph.h"
#include "runtime/intra_op_threads.h"
#include "runtime/tensor.h"

namespace graphgc {

struct SessionOptions {
  // Threads of the intra-op pool kernels get through
  // OpKernelContext::device(): 0 (or below) is the process's count when the
  // session is made (IntraOpThreads(), runtime/intra_op_threads.h: every
  // core unless SetIntraOpThreads said otherwise); 1 is exactly one thread.
  int intra_op_threads = 0;
};

namespace exec {
struct Plan;
class Executor;
}  // namespace exec
namespace session_internal {
struct PlanCache;
}  // namespace session_internal

class Session {
 public:
  explicit Session(Graph& g, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs what `fetches` and `targets` need and returns the fetched tensors,
  // in the order of `fetches` (a fetched DT_RESOURCE output is an empty
  // Tensor). Every feed must match its output's dtype and static shape (-1
  // matches any size); feeds the run does not need are not an error. Errors
  // name the node: an unfed Placeholder on the way, a bad feed, an empty
  // Output or one of another graph, a cycle, a kernel's failure (its status
  // is returned as the kernel gave it). A failed run changes nothing.
  absl::StatusOr<std::vector<Tensor>> Run(
      const std::vector<std::pair<Output, Tensor>>& feeds,
      const std::vector<Output>& fetches,
      const std::vector<Output>& targets = {});

  Graph& graph() const { return graph_; }

  // --- test hooks ---

  // Plans built since construction (a cache hit builds none).
  int64_t PlanBuildsForTesting() const {
    return plan_builds_.load(std::memory_order_relaxed);
  }
  // Plans in the cache now, once those that are no longer current were
  // evicted (as the next plan build evicts them).
  size_t CachedPlansForTesting() const;
  // Builds (without caching or running) the plan of a combination and
  // returns how many nodes it would run.
  absl::StatusOr<int64_t> PlanSizeForTesting(
      const std::vector<std::pair<Output, Tensor>>& feeds,
      const std::vector<Output>& fetches,
      const std::vector<Output>& targets = {}) const;

 private:
  using PlanPtr = std::shared_ptr<const exec::Plan>;

  // The cached plan of the combination, or a new one (built by
  // exec::BuildPlan, runtime/plan_builder.h) that replaces it in the cache.
  absl::StatusOr<PlanPtr> GetPlan(
      const std::vector<std::pair<Output, Tensor>>& feeds,
      const std::vector<Output>& fetches, const std::vector<Output>& targets,
      bool force_rebuild);

  Graph& graph_;
  std::unique_ptr<exec::Executor> executor_;  // runtime/executor.h
  std::unique_ptr<session_internal::PlanCache> cache_;
  std::atomic<int64_t> plan_builds_{0};
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_SESSION_H_
