// gc/sweeper.h
//
// The sweep phase, in two steps so the graph can purge its own indexes in
// between: FindGarbage() lists the unmarked live slots, then Sweep() frees
// them.
//
// After FindGarbage(): `garbage` holds exactly the live slots whose
// mark_epoch != epoch, in slot order (FindYoungGarbage: the young ones).
// After Sweep(): those slots are free, their objects destroyed (or, with
// `keep`, moved into `kept`) and their generations changed, so every stale
// NodeId or WeakNodeHandle to them is detected as dead.
// Both need the heap's mutex held exclusively.
#ifndef GRAPHGC_GC_SWEEPER_H_
#define GRAPHGC_GC_SWEEPER_H_

#include <memory>
#include <vector>

#include "gc/heap.h"

namespace graphgc {
namespace gc {

void FindGarbage(const Heap& heap, uint32_t epoch, std::vector<NodeId>& garbage)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());
// The minor collection's variant: only young slots, in allocation order.
void FindYoungGarbage(const Heap& heap, uint32_t epoch,
                      std::vector<NodeId>& garbage)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());

void Sweep(Heap& heap, absl::Span<const NodeId> garbage, bool keep,
           std::vector<std::unique_ptr<Object>>* kept)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_SWEEPER_H_
