#include "gc/marker.h"

namespace graphgc {
namespace gc {

template <bool kYoungOnly>
int64_t Marker::Trace(Heap& heap, absl::Span<const uint32_t> roots,
                      uint32_t epoch) {
  heap.mu().AssertHeld();
  int64_t marked = 0;
  worklist_.clear();
  for (uint32_t r : roots) {
    Slot& s = heap.slot(r);
    if (s.mark_epoch == epoch) continue;
    s.mark_epoch = epoch;
    ++marked;
    worklist_.push_back(r);
  }
  while (!worklist_.empty()) {
    const uint32_t n = worklist_.back();
    worklist_.pop_back();
    for (uint32_t in : heap.slot(n).edges) {
      Slot& s = heap.slot(in);
      if (s.mark_epoch == epoch ||
          (kYoungOnly && !s.young.load(std::memory_order_relaxed)))
        continue;
      s.mark_epoch = epoch;
      ++marked;
      worklist_.push_back(in);
    }
  }
  // Do not let one huge collection pin a huge worklist forever.
  if (worklist_.capacity() > (size_t{1} << 20)) {
    worklist_ = std::vector<uint32_t>();
  }
  return marked;
}

template int64_t Marker::Trace<false>(Heap&, absl::Span<const uint32_t>,
                                      uint32_t);
template int64_t Marker::Trace<true>(Heap&, absl::Span<const uint32_t>,
                                     uint32_t);

}  // namespace gc
}  // namespace graphgc
