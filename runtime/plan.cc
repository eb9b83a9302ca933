#include "runtime/plan.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace graphgc {
namespace exec {

absl::StatusOr<PinnedRun> PinnedRun::Pin(const Graph& graph,
                                         std::shared_ptr<const Plan> plan) {
  absl::StatusOr<gc::PinScope> pin = graph.Pin(plan->ids, &plan->live_as_of);
  if (!pin.ok()) return pin.status();
  return PinnedRun(std::move(plan), *std::move(pin));
}

absl::Status KernelError(const Node& node, const absl::Status& s) {
  if (absl::StrContains(s.message(), absl::StrCat("'", node.name, "'"))) {
    return s;
  }
  return absl::Status(
      s.code(), absl::StrCat(node.op, " '", node.name, "': ", s.message()));
}

absl::Status CheckOutputs(const Node& node,
                          absl::Span<const OutputCheck> checks,
                          absl::Span<const Tensor> outs) {
  for (size_t k = 0; k < checks.size(); ++k) {
    const Tensor& t = outs[k];
    if (!OutputMatches(checks[k], t)) {
      return absl::InternalError(absl::StrCat(
          node.op, " '", node.name, "': kernel produced output ", k, " as ",
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
