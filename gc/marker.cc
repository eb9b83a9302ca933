#include "gc/marker.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace graphgc {
namespace gc {
namespace {

// How far below a slot being marked MarkHeap fetches slots ahead: inputs
// are made before their readers, so a trace mostly walks down the slots.
constexpr uint32_t kPrefetchAhead = 128;

// No slot: the heap's slots number at most Heap::kMaxSlots, below this.
constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();
static_assert(Heap::kMaxSlots < kNoSlot);

// MarkHeap's marks, one bit per slot, over a reused buffer: the bits of a
// million slots (128 KB) stay in cache.
class MarkBits {
 public:
  MarkBits(std::vector<uint64_t>& words, uint32_t slots) : words_(words) {
    words_.assign((size_t{slots} + 63) / 64, 0);
  }

  // Sets slot `i`'s bit; false if it was set already.
  bool Set(uint32_t i) {
    uint64_t& word = words_[i >> 6];
    const uint64_t bit = uint64_t{1} << (i & 63);
    if ((word & bit) != 0) return false;
    word |= bit;
    return true;
  }
  bool IsSet(uint32_t i) const {
    return ((words_[i >> 6] >> (i & 63)) & 1) != 0;
  }
  // The bits of slots [64 w, 64 w + 64).
  uint64_t word(uint32_t w) const { return words_[w]; }

 private:
  std::vector<uint64_t>& words_;
};

}  // namespace

int64_t Marker::MarkHeap(Heap& heap, uint32_t epoch, bool stamp,
                         NodeIdList& garbage) {
  heap.mu().AssertHeld();
  garbage.clear();
  // Room for every live node at once: grown by doubling, the list would be
  // copied and its fresh pages touched twice over, and first-touch faults
  // are a large share of a big collection. Pages past the list's end stay
  // untouched (no resident cost).
  garbage.reserve(static_cast<size_t>(heap.live_count()));
  const uint32_t slots = heap.num_slots();
  MarkBits marks(mark_bits_, slots);
  int64_t marked = 0;
  // Slots above `pass` have been reached by the pass (none yet).
  uint32_t pass = slots;
  bool marked_above_pass = false;
  // Depth first: the first input a node newly marks is traced next without
  // a trip through the worklist, the others wait there. A model is mostly
  // chains (each node reading the one made before it), so most nodes never
  // enter the worklist.
  auto trace = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu()) {
    while (!worklist_.empty()) {
      uint32_t n = worklist_.back();
      worklist_.pop_back();
      while (n != kNoSlot) {
        uint32_t next = kNoSlot;
        for (uint32_t in : heap.slot(n).edges) {
          if (!marks.Set(in)) continue;
          ++marked;
          if (in > pass) marked_above_pass = true;
          if (in >= kPrefetchAhead) {
            __builtin_prefetch(&heap.slot(in - kPrefetchAhead));
          }
          if (next == kNoSlot) {
            next = in;
          } else {
            worklist_.push_back(in);
          }
        }
        n = next;
      }
    }
  };
  // Pinned slots are roots the slots do not show: traced first.
  worklist_.clear();
  heap.AppendPinned(worklist_);
  size_t pinned = 0;
  for (uint32_t p : worklist_) {
    if (marks.Set(p)) worklist_[pinned++] = p;
  }
  worklist_.resize(pinned);
  marked += static_cast<int64_t>(pinned);
  trace();
  // Slots below `top` are still to be passed; each step goes straight to
  // the highest unmarked one among them, a word of mark bits at a time (a
  // traced model leaves a run of marked slots under its root).
  for (uint32_t top = slots; top > 0;) {
    const uint32_t word_index = (top - 1) >> 6;
    const uint32_t bit = (top - 1) & 63;
    const uint64_t at_or_below = ~uint64_t{0} >> (63 - bit);
    const uint64_t unmarked = ~marks.word(word_index) & at_or_below;
    if (unmarked == 0) {
      top = word_index << 6;
      continue;
    }
    const uint32_t i = (word_index << 6) +
                       static_cast<uint32_t>(63 - std::countl_zero(unmarked));
    top = i;
    const Slot& s = heap.slot(i);
    if (!s.live) continue;
    pass = i;
    if (heap.MayBeHeld(s)) {
      marks.Set(i);
      ++marked;
      worklist_.push_back(i);
      trace();
    } else {
      // Unmarked when listed; only a trace reaching above the pass (an
      // input in a higher slot than its reader) can still mark it.
      garbage.push_back(NodeId{i, s.generation});
    }
  }
  std::reverse(garbage.begin(), garbage.end());
  if (marked_above_pass) {
    std::erase_if(garbage, [&](NodeId id) { return marks.IsSet(id.index); });
  }
  if (stamp) {
    for (uint32_t i = 0; i < slots; ++i) {
      if (marks.IsSet(i)) heap.slot(i).mark_epoch = epoch;
    }
  }
  TrimWorklist();
  if (mark_bits_.capacity() > (size_t{1} << 17)) mark_bits_ = {};
  return marked;
}

int64_t Marker::MarkYoung(Heap& heap, absl::Span<const uint32_t> roots,
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
      if (s.mark_epoch == epoch || !s.young.load(std::memory_order_relaxed)) {
        continue;
      }
      s.mark_epoch = epoch;
      ++marked;
      worklist_.push_back(in);
    }
  }
  TrimWorklist();
  return marked;
}

void Marker::TrimWorklist() {
  if (worklist_.capacity() > (size_t{1} << 20)) worklist_ = {};
}

}  // namespace gc
}  // namespace graphgc
