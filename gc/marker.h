// gc/marker.h
//
// Marker: the mark phase, in its two variants. Both follow input edges with
// an explicit worklist (no recursion, so a chain of millions of nodes is
// fine), and both need the heap's mutex held exclusively. Not thread-safe;
// one Marker per collector, reused so the worklist keeps its capacity
// between collections.
//
// MarkHeap(), the full collection's mark, finds the roots, marks and lists
// the garbage in one pass over the slots, highest index first (the three
// used to be three passes, each reading every slot and bound by memory
// bandwidth). A slot is a root when the pass reaches it and is traced at
// once; its inputs, made before it and so mostly at lower indices, are
// marked before the pass reaches them, and the pass skips them by their
// mark bit alone. The mark bits live beside the slots (one bit per slot),
// not in them: each live slot is read about once and none is written. After
// MarkHeap(heap, epoch, stamp, garbage):
//   1. every slot a root reaches is marked: the live slots with a strong
//      handle (root count > 0, gc/root_count.h) or a pin (Heap::AppendPinned)
//      and every slot their edges reach, however the edges run between slot
//      indices (an input in a higher slot than its reader: a reused slot, or a
//      control edge made later);
//   2. `garbage` holds exactly the live unmarked slots, in slot order, and
//      nothing else (what it held before is cleared);
//   3. the return value is how many slots were marked;
//   4. with `stamp`, every marked slot has mark_epoch == epoch, and only
//      those (Heap::VerifyMarkingForTesting checks 1 from the stamps);
//      without it no slot was written.
//
// MarkYoung(), the minor collection's mark, starts from the roots the
// caller passes (gc/roots.h CollectYoungRoots) and follows edges only into
// young slots: old slots are not collected by a minor collection, and reach
// young ones only through Heap::remembered(), which the caller passes as
// roots. It costs the young generation only. After MarkYoung(heap, roots,
// epoch): every young slot reachable from `roots` without passing through
// an old slot has mark_epoch == epoch, no other young slot has, and the
// return value is how many were marked (FindYoungGarbage in gc/sweeper.h
// then lists the rest).
#ifndef GRAPHGC_GC_MARKER_H_
#define GRAPHGC_GC_MARKER_H_

#include <cstdint>
#include <vector>

#include "gc/heap.h"

namespace graphgc {
namespace gc {

class Marker {
 public:
  // The full collection's mark (postconditions 1-4 above).
  int64_t MarkHeap(Heap& heap, uint32_t epoch, bool stamp, NodeIdList& garbage)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());
  // The minor collection's mark from young `roots`.
  int64_t MarkYoung(Heap& heap, absl::Span<const uint32_t> roots,
                    uint32_t epoch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());

  size_t worklist_capacity() const { return worklist_.capacity(); }

 private:
  // Do not let one huge collection pin a huge worklist forever.
  void TrimWorklist();

  std::vector<uint32_t> worklist_;
  std::vector<uint64_t> mark_bits_;  // MarkHeap's, one bit per slot
};

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_MARKER_H_
