// gc/roots.h
//
// The collector's first phase and the retention queries built on it. A root
// is a live slot with a strong handle (root count > 0) or a slot pinned by an
// in-flight run. Every root can name its holders by owner label
// (Heap::RootLabels), which is what ExplainRetention reports. The queries
// here (FindRetentionPath, HoldersText, UsageByOwner) are the algorithms
// behind Graph::ExplainRetention and Graph::LeakReport; the graph adds only
// its node names.
//
// All functions need the heap's mutex held, shared at least.
#ifndef GRAPHGC_GC_ROOTS_H_
#define GRAPHGC_GC_ROOTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gc/heap.h"

namespace graphgc {
namespace gc {

// Appends every root's slot index to `roots` (pinned slots may repeat).
void CollectRoots(const Heap& heap, std::vector<uint32_t>& roots)
    ABSL_SHARED_LOCKS_REQUIRED(heap.mu());
// The roots of a minor collection: the young roots, and the young slots that
// old ones read (Heap::remembered()). Costs the young generation, not the
// heap.
void CollectYoungRoots(const Heap& heap, std::vector<uint32_t>& roots)
    ABSL_SHARED_LOCKS_REQUIRED(heap.mu());

// How a node is kept alive: a root, its holders, and the chain of input
// edges from the root down to the node (root first, node last; a node that
// is itself a root has a chain of one).
struct RetentionPath {
  std::vector<std::pair<std::string, int32_t>> holders;  // label, count
  std::vector<uint32_t> chain;
};

// The shortest chain from any root to `target` (breadth-first over input
// edges); nullopt when no root reaches it (it is garbage awaiting a sweep).
std::optional<RetentionPath> FindRetentionPath(const Heap& heap,
                                               uint32_t target)
    ABSL_SHARED_LOCKS_REQUIRED(heap.mu());

// A path's holders as one line: their labels in RootLabels' order, joined
// by ", ", a label held by several handles followed by " (N handles)".
std::string HoldersText(const RetentionPath& path);

// One line of a leak report: live slots grouped by who holds them.
struct OwnerUsage {
  std::string owner;  // the first owner label of the roots of this group
  int64_t nodes = 0;  // live slots first reached from this group's roots
  int64_t bytes = 0;  // the sum of their objects' Object::ApproxBytes()
};

// Label of the leak report's line for live slots that no root reaches
// (garbage the next collection sweeps).
inline constexpr absl::string_view kUnreachableOwner =
    "(unreachable, awaiting collection)";

// Every live slot, grouped by owner: roots are grouped by their first holder
// label (kUnlabelledRoot when they have none), groups are walked in label
// order, and each live slot counts for the first group whose roots reach it
// through edges. Live slots no root reaches make a last kUnreachableOwner
// line (without bytes). Lines are sorted by node count, largest first,
// ties in label order; a group that reaches nothing new has no line.
// Costs one walk of the live heap.
std::vector<OwnerUsage> UsageByOwner(const Heap& heap)
    ABSL_SHARED_LOCKS_REQUIRED(heap.mu());

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_ROOTS_H_
