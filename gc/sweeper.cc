#include "gc/sweeper.h"

namespace graphgc {
namespace gc {

void FindYoungGarbage(const Heap& heap, uint32_t epoch, NodeIdList& garbage) {
  for (const YoungEntry& e : heap.young()) {
    if (heap.IsLive(e.id) && heap.slot(e.id.index).mark_epoch != epoch) {
      garbage.push_back(e.id);
    }
  }
}

void Sweep(Heap& heap, absl::Span<const NodeId> garbage, bool keep,
           std::vector<std::unique_ptr<Object>>* kept) {
  heap.mu().AssertHeld();
  heap.ReserveFreeSlots(garbage.size());
  for (NodeId id : garbage) {
    std::unique_ptr<Object> object = heap.Free(id.index, keep);
    if (keep && kept != nullptr && object != nullptr) {
      kept->push_back(std::move(object));
    }
  }
}

void SweepLazily(Heap& heap, absl::Span<const NodeId> garbage,
                 std::vector<std::unique_ptr<Object>>& prompt) {
  heap.mu().AssertHeld();
  heap.ReserveFreeSlots(garbage.size());
  heap.ReserveUnreclaimed(garbage.size());
  for (NodeId id : garbage) {
    const bool promptly = heap.DestroysPromptly(id.index);
    std::unique_ptr<Object> object = heap.Free(id.index, /*keep=*/true);
    if (object == nullptr) continue;
    if (promptly) {
      prompt.push_back(std::move(object));
    } else {
      heap.DeferDestruction(std::move(object));
    }
  }
}

}  // namespace gc
}  // namespace graphgc
