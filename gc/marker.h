// gc/marker.h
//
// Marker: the mark phase. Starting from the roots it follows input edges
// with an explicit worklist (no recursion, so a chain of millions of nodes
// is fine) and stamps each reached slot with the cycle's epoch.
//
// After Mark(): every slot reachable from a root has mark_epoch == epoch,
// and no other slot has. Needs the heap's mutex held exclusively.
// Not thread-safe; one Marker per collector, reused so the worklist keeps
// its capacity between collections.
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
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());

  size_t worklist_capacity() const { return worklist_.capacity(); }

 private:
  std::vector<uint32_t> worklist_;
};

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_MARKER_H_
