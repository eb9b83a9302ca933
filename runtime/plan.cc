#include "runtime/plan.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
namespace exec {

absl::Status PlanIsCurrent(const gc::Heap& heap, const Plan& plan) {
  const int64_t version = heap.structure_version();
  if (plan.current_as_of.load(std::memory_order_relaxed) == version) {
    return absl::OkStatus();
  }
  for (size_t i = 0; i < plan.ids.size(); ++i) {
    const NodeId id = plan.ids[i];
    if (!heap.IsLive(id)) {
      return absl::NotFoundError(absl::StrCat("the plan's node in slot ",
                                              id.index, " (generation ",
                                              id.generation, ") was swept"));
    }
    if (heap.edges(id.index).size() != plan.edge_counts[i]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the plan's node in slot ", id.index, " gained an input"));
    }
  }
  // Concurrent checkers hold the same lock shared, so they store the same
  // version.
  plan.current_as_of.store(version, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::StatusOr<PinnedRun> PinnedRun::Pin(const Graph& graph,
                                         std::shared_ptr<const Plan> plan) {
  gc::Heap& heap = graph.heap();
  ReaderLock lock(heap.mu());
  GG_RETURN_IF_ERROR(PlanIsCurrent(heap, *plan));
  gc::PinScope pin = gc::PinIds(heap, plan->ids);
  return PinnedRun(std::move(plan), std::move(pin));
}

absl::Status KernelError(const Node& node, const absl::Status& s) {
  if (absl::StrContains(s.message(), absl::StrCat("'", node.name, "'"))) {
    return s;
  }
  return absl::Status(
      s.code(), absl::StrCat(node.op(), " '", node.name, "': ", s.message()));
}

absl::Status CheckOutputs(const Node& node,
                          absl::Span<const OutputCheck> checks,
                          absl::Span<const Tensor> outs) {
  for (size_t k = 0; k < checks.size(); ++k) {
    const Tensor& t = outs[k];
    if (!OutputMatches(checks[k], t)) {
      return absl::InternalError(absl::StrCat(
          node.op(), " '", node.name, "': kernel produced output ", k, " as ",
          t.IsInitialized() ? absl::StrCat(DataTypeString(t.dtype()), " ",
                                           t.shape().DebugString())
                            : std::string("nothing"),
          ", expected ", DataTypeString(checks[k].dtype), " ",
          checks[k].shape.DebugString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace exec
}  // namespace graphgc
