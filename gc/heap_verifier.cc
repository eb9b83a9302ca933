// gc/heap_verifier.cc
//
// Heap::VerifyForTesting and Heap::VerifyMarkingForTesting: the numbered
// invariants of gc/heap.h and the mark phase's postcondition, checked slot
// by slot (CPython's validate_list, cppgc's marking verifier).
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gc/heap.h"

namespace graphgc {
namespace gc {
namespace {

absl::Status Broken(int invariant, absl::string_view what) {
  return absl::InternalError(
      absl::StrCat("heap invariant ", invariant, " broken: ", what));
}

}  // namespace

absl::Status Heap::VerifyForTesting() const {
  mu_.AssertReaderHeld();
  // 1. Every slot ever used sits in an allocated chunk.
  if (num_slots_ > kMaxSlots) {
    return Broken(1, absl::StrCat(num_slots_, " slots, over ", kMaxSlots));
  }
  for (uint32_t c = 0; c * kChunkSize < num_slots_; ++c) {
    if (chunks_[c] == nullptr) {
      return Broken(1, absl::StrCat("chunk ", c, " of slots in use is absent"));
    }
  }
  // 2. A live slot's edges name live slots.
  int64_t live = 0;
  for (uint32_t i = 0; i < num_slots_; ++i) {
    const Slot& s = slot(i);
    if (ReadCount(home_, s.strong()) < 0) {
      return Broken(1, absl::StrCat("slot ", i, " has a negative root count"));
    }
    if (!s.live) continue;
    ++live;
    for (uint32_t in : s.edges) {
      if (in >= num_slots_ || !slot(in).live) {
        return Broken(2, absl::StrCat("live slot ", i, " has an edge to slot ",
                                      in, ", which is not live"));
      }
    }
  }
  // 3. Generations never 0; the free list holds exactly the slots not
  // live, each once; the live count is right.
  if (live != live_count_) {
    return Broken(3, absl::StrCat(live, " live slots but live_count() says ",
                                  live_count_));
  }
  if (static_cast<int64_t>(free_.size()) + live != num_slots_) {
    return Broken(3, absl::StrCat(free_.size(), " free and ", live,
                                  " live slots, but ", num_slots_, " in use"));
  }
  absl::flat_hash_set<uint32_t> free_seen;
  for (uint32_t f : free_) {
    if (f >= num_slots_ || slot(f).live) {
      return Broken(3, absl::StrCat("free list holds slot ", f,
                                    ", which is live or was never used"));
    }
    if (!free_seen.insert(f).second) {
      return Broken(3, absl::StrCat("free list holds slot ", f, " twice"));
    }
  }
  for (uint32_t i = 0; i < num_slots_; ++i) {
    if (slot(i).generation == 0) {
      return Broken(3, absl::StrCat("slot ", i, " has generation 0"));
    }
  }
  // 4. Every live young slot is in young(), in allocation order; an old
  // slot reads a young one only through remembered().
  absl::flat_hash_set<uint32_t> listed_young;
  int64_t last_serial = 0;
  for (const YoungEntry& e : young_) {
    if (e.serial <= last_serial) {
      return Broken(4, absl::StrCat("young() is out of allocation order at "
                                    "slot ",
                                    e.id.index));
    }
    last_serial = e.serial;
    if (IsLive(e.id)) listed_young.insert(e.id.index);
  }
  absl::flat_hash_set<uint32_t> remembered;
  for (NodeId id : remembered_) {
    if (IsLive(id)) remembered.insert(id.index);
  }
  for (uint32_t i = 0; i < num_slots_; ++i) {
    const Slot& s = slot(i);
    if (!s.live) continue;
    const bool young = s.young.load(std::memory_order_relaxed);
    if (young && !listed_young.contains(i)) {
      return Broken(4, absl::StrCat("young slot ", i, " is not in young()"));
    }
    if (young) continue;
    for (uint32_t in : s.edges) {
      if (slot(in).young.load(std::memory_order_relaxed) &&
          !remembered.contains(in)) {
        return Broken(4, absl::StrCat("old slot ", i, " reads young slot ", in,
                                      ", which is not in remembered()"));
      }
    }
  }
  // Pins: an in-flight run's nodes stay live.
  std::vector<uint32_t> pinned;
  AppendPinned(pinned);
  for (uint32_t p : pinned) {
    if (p >= num_slots_ || !slot(p).live) {
      return absl::InternalError(
          absl::StrCat("pinned slot ", p, " is not live"));
    }
  }
  return absl::OkStatus();
}

absl::Status Heap::VerifyMarkingForTesting(uint32_t epoch,
                                           bool young_only) const {
  mu_.AssertReaderHeld();
  auto in_scope = [](const Slot& s, bool young_only) {
    return s.live && (!young_only || s.young.load(std::memory_order_relaxed));
  };
  std::vector<uint32_t> pinned;
  AppendPinned(pinned);
  absl::flat_hash_set<uint32_t> pinned_set(pinned.begin(), pinned.end());
  for (uint32_t i = 0; i < num_slots_; ++i) {
    const Slot& s = slot(i);
    if (!s.live) continue;
    const bool root =
        ReadCount(home_, s.strong()) > 0 || pinned_set.contains(i);
    if (in_scope(s, young_only) && root && s.mark_epoch != epoch) {
      return absl::InternalError(
          absl::StrCat("mark phase: root slot ", i, " is not marked"));
    }
    // In a minor collection an old slot is not marked but its young inputs
    // are roots (remembered()).
    const bool traced = young_only ? !s.young.load(std::memory_order_relaxed) ||
                                         s.mark_epoch == epoch
                                   : s.mark_epoch == epoch;
    if (!traced) continue;
    for (uint32_t in : s.edges) {
      if (in_scope(slot(in), young_only) && slot(in).mark_epoch != epoch) {
        return absl::InternalError(absl::StrCat("mark phase: marked slot ", i,
                                                " reads slot ", in,
                                                ", which is not marked"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace gc
}  // namespace graphgc
