#include "gc/roots.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphgc {
namespace gc {

void CollectRoots(const Heap& heap, std::vector<uint32_t>& roots) {
  const uint32_t n = heap.num_slots();
  for (uint32_t i = 0; i < n; ++i) {
    const Slot& s = heap.slot(i);
    if (s.live && heap.MayBeHeld(s)) {
      roots.push_back(i);
    }
  }
  heap.AppendPinned(roots);
}

void CollectYoungRoots(const Heap& heap, std::vector<uint32_t>& roots) {
  for (const YoungEntry& e : heap.young()) {
    if (heap.IsLive(e.id) && heap.MayBeHeld(heap.slot(e.id.index))) {
      roots.push_back(e.id.index);
    }
  }
  for (NodeId id : heap.remembered()) {
    if (heap.IsYoung(id)) roots.push_back(id.index);
  }
  // The pinned slots, of which only the young ones are kept.
  const size_t pinned_from = roots.size();
  heap.AppendPinned(roots);
  size_t kept = pinned_from;
  for (size_t i = pinned_from; i < roots.size(); ++i) {
    if (heap.slot(roots[i]).young) roots[kept++] = roots[i];
  }
  roots.resize(kept);
}

std::optional<RetentionPath> FindRetentionPath(const Heap& heap,
                                               uint32_t target) {
  constexpr uint32_t kUnseen = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> roots;
  CollectRoots(heap, roots);
  // parent[i] == i marks a root; kUnseen marks a slot not reached yet.
  std::vector<uint32_t> parent(heap.num_slots(), kUnseen);
  std::vector<uint32_t> queue;
  queue.reserve(roots.size());
  for (uint32_t r : roots) {
    if (parent[r] == kUnseen) {
      parent[r] = r;
      queue.push_back(r);
    }
  }
  for (size_t head = 0; head < queue.size() && parent[target] == kUnseen;
       ++head) {
    const uint32_t n = queue[head];
    for (uint32_t in : heap.edges(n)) {
      if (parent[in] != kUnseen) continue;
      parent[in] = n;
      queue.push_back(in);
    }
  }
  if (parent[target] == kUnseen) return std::nullopt;
  RetentionPath path;
  for (uint32_t n = target;; n = parent[n]) {
    path.chain.push_back(n);
    if (parent[n] == n) break;
  }
  std::reverse(path.chain.begin(), path.chain.end());
  path.holders = heap.RootLabels(path.chain.front());
  return path;
}

std::string HoldersText(const RetentionPath& path) {
  std::vector<std::string> holders;
  holders.reserve(path.holders.size());
  for (const auto& [label, count] : path.holders) {
    holders.push_back(count > 1 ? absl::StrCat(label, " (", count, " handles)")
                                : label);
  }
  return absl::StrJoin(holders, ", ");
}

std::vector<OwnerUsage> UsageByOwner(const Heap& heap) {
  std::vector<uint32_t> roots;
  CollectRoots(heap, roots);
  absl::btree_map<std::string, std::vector<uint32_t>> by_owner;
  for (uint32_t r : roots) {
    std::vector<std::pair<std::string, int32_t>> labels = heap.RootLabels(r);
    by_owner[labels.empty() ? std::string(kUnlabelledRoot)
                            : std::move(labels.front().first)]
        .push_back(r);
  }
  std::vector<bool> seen(heap.num_slots(), false);
  std::vector<OwnerUsage> report;
  std::vector<uint32_t> stack;
  int64_t reached = 0;
  for (const auto& [owner, owner_roots] : by_owner) {
    OwnerUsage usage{.owner = owner};
    stack.assign(owner_roots.begin(), owner_roots.end());
    while (!stack.empty()) {
      const uint32_t n = stack.back();
      stack.pop_back();
      if (seen[n]) continue;
      seen[n] = true;
      ++usage.nodes;
      if (const Object* object = heap.object(n); object != nullptr) {
        usage.bytes += object->ApproxBytes();
      }
      for (uint32_t in : heap.edges(n)) {
        if (!seen[in]) stack.push_back(in);
      }
    }
    reached += usage.nodes;
    if (usage.nodes > 0) report.push_back(std::move(usage));
  }
  if (const int64_t unreachable = heap.live_count() - reached;
      unreachable > 0) {
    report.push_back(OwnerUsage{.owner = std::string(kUnreachableOwner),
                                .nodes = unreachable});
  }
  std::stable_sort(report.begin(), report.end(),
                   [](const OwnerUsage& a, const OwnerUsage& b) {
                     return a.nodes > b.nodes;
                   });
  return report;
}

}  // namespace gc
}  // namespace graphgc
