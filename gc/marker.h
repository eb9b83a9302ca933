// gc/marker.h
//
// Marker: the mark phase. Starting from the roots it follows input edges
// with an explicit worklist (no recursion, so a chain of millions of nodes
// is fine) and stamps each reached slot with the cycle's epoch.
//
// After Mark(): every slot reachable from a root has mark_epoch == epoch,
// and no other slot has. MarkYoung() is the minor collection's variant: it
// follows edges only into young slots (old ones are not collected by a
// minor collection, and reach young ones only through Heap::remembered(),
// which the caller passes as roots), so it costs the young generation only.
// Needs the heap's mutex held exclusively. Not thread-safe; one Marker per
// collector, reused so the worklist keeps its capacity between collections.
#ifndef GRAPHGC_GC_MARKER_H_
#define GRAPHGC_GC_MARKER_H_

#include <cstdint>
#include <vector>

#include "gc/heap.h"

namespace graphgc {
namespace gc {

class Marker {
 public:
  // Marks from `roots`; returns how many slots were marked.
  int64_t Mark(Heap& heap, absl::Span<const uint32_t> roots, uint32_t epoch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu()) {
    return Trace</*young_only=*/false>(heap, roots, epoch);
  }
  // Marks the young slots reachable from young `roots` without passing
  // through an old slot.
  int64_t MarkYoung(Heap& heap, absl::Span<const uint32_t> roots,
                    uint32_t epoch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu()) {
    return Trace</*young_only=*/true>(heap, roots, epoch);
  }

  size_t worklist_capacity() const { return worklist_.capacity(); }

 private:
  template <bool kYoungOnly>
  int64_t Trace(Heap& heap, absl::Span<const uint32_t> roots, uint32_t epoch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());

  std::vector<uint32_t> worklist_;
};

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_MARKER_H_
