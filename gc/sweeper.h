// gc/sweeper.h
//
// The sweep phase, in two steps so the graph can purge its own indexes in
// between: the garbage is listed (a full collection's by Marker::MarkHeap,
// gc/marker.h; a minor one's by FindYoungGarbage() here), then Sweep()
// frees it.
//
// After FindYoungGarbage(): `garbage` holds exactly the live young slots
// whose mark_epoch != epoch, in allocation order.
// After Sweep(): the listed slots are free, their objects destroyed (or,
// with `keep`, moved into `kept`) and their generations changed, so every
// stale NodeId or WeakNodeHandle to them is detected as dead.
// After SweepLazily(): the same, but no object is destroyed: those that
// asked to be destroyed promptly (Object::DestroyPromptly) are moved into
// `prompt`, the others wait in the heap's unreclaimed list (gc/heap.h
// invariant 5), in garbage order.
// All three need the heap's mutex held exclusively.
#ifndef GRAPHGC_GC_SWEEPER_H_
#define GRAPHGC_GC_SWEEPER_H_

#include <memory>
#include <vector>

#include "gc/heap.h"

namespace graphgc {
namespace gc {

// The minor collection's garbage: the unmarked live young slots.
void FindYoungGarbage(const Heap& heap, uint32_t epoch, NodeIdList& garbage)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());

void Sweep(Heap& heap, absl::Span<const NodeId> garbage, bool keep,
           std::vector<std::unique_ptr<Object>>* kept)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());

void SweepLazily(Heap& heap, absl::Span<const NodeId> garbage,
                 std::vector<std::unique_ptr<Object>>& prompt)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_SWEEPER_H_
