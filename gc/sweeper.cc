#include "gc/sweeper.h"

namespace graphgc {
namespace gc {

void FindGarbage(const Heap& heap, uint32_t epoch,
                 std::vector<NodeId>& garbage) {
  const uint32_t n = heap.num_slots();
  for (uint32_t i = 0; i < n; ++i) {
    const Slot& s = heap.slot(i);
    if (s.live && s.mark_epoch != epoch) {
      garbage.push_back(NodeId{i, s.generation});
    }
  }
}

void FindYoungGarbage(const Heap& heap, uint32_t epoch,
                      std::vector<NodeId>& garbage) {
  for (const YoungEntry& e : heap.young()) {
    if (heap.IsLive(e.id) && heap.slot(e.id.index).mark_epoch != epoch) {
      garbage.push_back(e.id);
    }
  }
}

void Sweep(Heap& heap, absl::Span<const NodeId> garbage, bool keep,
           std::vector<std::unique_ptr<Object>>* kept) {
  heap.mu().AssertHeld();
  for (NodeId id : garbage) {
    std::unique_ptr<Object> object = heap.Free(id.index, keep);
    if (keep && kept != nullptr && object != nullptr) {
      kept->push_back(std::move(object));
    }
  }
}

}  // namespace gc
}  // namespace graphgc
