// runtime/name_table.h
//
// NameTable<Node>: one name group's table (runtime/name_index.cc), a set of
// nodes keyed by their `name`, each with a 32-bit payload (the group keeps
// a node's slot and base tag there). Open addressing with linear probing,
// in two arrays (one block): the keys (the name's 32-bit hash, which also says
// whether the slot is empty, holds an entry or held one, and the payload: 8
// bytes a slot) and the node pointers (8 bytes a slot, read only to compare a
// name whose hash matched, or when a caller asks for them).
//
// Why not absl::flat_hash_set: a collection that sweeps a big group
// removes a share of its names at once, and absl has only an erase per
// entry, with a branch per slot that the table's random order makes a coin
// toss; EraseIf()'s pass has no branch on the data and is several times
// faster (gc_bench's BM_NameSweep rows compare the two). 16-byte entries
// with backward-shift deletion move every survivor behind a hole, a branch
// per slot, and are slower than absl.
//
// A removed entry leaves a tombstone, as absl's do: lookups probe past it,
// inserts reuse it, and the arrays are rebuilt (at the same size, or
// grown: fourfold below 64 slots, else doubled) when entries and
// tombstones together would pass 7/8 of them,
// absl's bound: a model's scope of 100 names then takes 128 slots (2 KiB),
// as in absl, where 3/4 would take 256 and add some 20 bytes per live node
// (gc_bench's BM_PeerGraphgcResident reads bytes per live node).
//
// Postconditions:
//  1. Find(name, hash) is the entry named `name` (its node and payload) or
//     an Item with node == nullptr; it reads the node of an entry only when
//     the entry's hash equals `hash`.
//  2. Insert(node, hash, payload) adds an entry; no entry may have its
//     name. It throws only when the arrays must be rebuilt and that
//     allocation fails, and then the table is unchanged.
//  3. Erase(hash, payload, mask) removes the entry whose name has hash
//     `hash` and whose payload agrees with `payload` on the bits of `mask`
//     (the caller's mask must single out one entry: the name index's holds
//     the node's slot) and says whether there was one; it reads only the
//     keys, never a node, so it costs one cache miss where comparing node
//     pointers would cost two; never throws.
//  4. EraseIf(leaves) calls leaves(payload, full, index) once for every
//     slot of the arrays, in order: `full` says whether the slot holds an
//     entry (when it does not, `payload` means nothing and leaves must
//     return false), `index` is the slot's, for NodeAt(index). Every entry
//     for which it returns true is removed. It allocates nothing. If
//     `leaves` throws, the entries it returned true for are removed, the
//     others stay, and the exception propagates.
//  5. Entries and tombstones together fill at most 7/8 of the arrays, so
//     a probe ends at an empty slot.
//
// Not thread-safe: the graph calls it under its mutex.
#ifndef GRAPHGC_RUNTIME_NAME_TABLE_H_
#define GRAPHGC_RUNTIME_NAME_TABLE_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

#include "absl/strings/string_view.h"
#include "util/huge_pages.h"

namespace graphgc {

template <typename Node>
class NameTable {
 public:
  // An entry as Find returns it: node == nullptr when there is none.
  struct Item {
    const Node* node = nullptr;
    uint32_t payload = 0;
  };

  // Holds no arrays until the first insert.
  NameTable() = default;
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  size_t size() const { return size_; }
  // Slots of the arrays, and those holding an entry or a tombstone.
  size_t capacity() const { return capacity_; }
  size_t used() const { return used_; }

  // Postcondition 1.
  Item Find(absl::string_view name, uint32_t hash) const {
    if (size_ == 0) return Item{};
    const uint32_t stored = Stored(hash);
    for (size_t i = Home(stored);; i = Next(i)) {
      const Key& k = keys_[i];
      if (k.hash == kEmpty) return Item{};
      if (k.hash == stored && nodes_[i]->name == name) {
        return Item{nodes_[i], k.payload};
      }
    }
  }

  // Postcondition 2.
  void Insert(const Node* node, uint32_t hash, uint32_t payload) {
    if ((used_ + 1) * 8 > capacity_ * 7) Rebuild();
    const uint32_t stored = Stored(hash);
    size_t i = Home(stored);
    while (keys_[i].hash > kTombstone) i = Next(i);
    used_ += keys_[i].hash == kEmpty;
    keys_[i] = Key{stored, payload};
    nodes_[i] = node;
    ++size_;
  }

  // Postcondition 3.
  bool Erase(uint32_t hash, uint32_t payload, uint32_t payload_mask) noexcept {
    if (size_ == 0) return false;
    const uint32_t stored = Stored(hash);
    const uint32_t want = payload & payload_mask;
    size_t i = Home(stored);
    for (;; i = Next(i)) {
      if (keys_[i].hash == kEmpty) return false;
      if (keys_[i].hash == stored &&
          (keys_[i].payload & payload_mask) == want) {
        break;
      }
    }
    --size_;
    keys_[i].hash = kTombstone;
    // A tombstone just before an empty slot ends no probe that matters:
    // it and the tombstones before it become empty again.
    if (keys_[Next(i)].hash == kEmpty) {
      for (size_t j = i; keys_[j].hash == kTombstone; j = Prev(j)) {
        keys_[j].hash = kEmpty;
        --used_;
      }
    }
    return true;
  }

  // Postcondition 4. The loop has no branch on the table's contents (the
  // kill is data, the write unconditional), so the random order of the
  // entries costs no mispredictions; `leaves` should be written the same
  // way.
  template <typename Leaves>
  void EraseIf(Leaves leaves) {
    if (size_ == 0) return;
    Key* keys = keys_;
    const size_t n = capacity_;
    size_t gone = 0;
    try {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t hash = keys[i].hash;
        const uint32_t kill = leaves(keys[i].payload, hash > kTombstone, i);
        // hash, or kTombstone where kill is 1, in bit operations: written
        // as a ?: it was compiled to a branch that mispredicted on every
        // other entry of a half-garbage sweep.
        keys[i].hash = hash ^ ((hash ^ kTombstone) & (0u - kill));
        gone += kill;
      }
    } catch (...) {
      size_ -= gone;
      throw;
    }
    size_ -= gone;
    // The node pointers of the removed entries are not cleared: nothing
    // reads a tombstone's node.
  }

  // The node of the entry in slot `index` (EraseIf's `index`, while that
  // entry is in the table).
  const Node* NodeAt(size_t index) const { return nodes_[index]; }

  // Calls f(node) for each entry's node until it returns true; whether one
  // did.
  template <typename F>
  bool AnyOf(F f) const {
    for (size_t i = 0; size_ != 0 && i < capacity_; ++i) {
      if (keys_[i].hash > kTombstone && f(nodes_[i])) {
        return true;
      }
    }
    return false;
  }

 private:
  static constexpr uint32_t kEmpty = 0;
  static constexpr uint32_t kTombstone = 1;
  static constexpr size_t kMinCapacity = 8;
  // Small arrays grow fourfold: a model's scope of 100 names is rebuilt at
  // 8, 32 and 128 slots instead of 8, 16, 32, 64 and 128, and still ends
  // in 128: rebuilds are a visible share of building a large graph.
  static constexpr size_t kQuadrupleBelow = 64;
  struct Key {
    uint32_t hash = kEmpty;  // Stored(the name's hash), or kEmpty/kTombstone
    uint32_t payload = 0;
  };
  static constexpr size_t kSlotBytes = sizeof(Key) + sizeof(const Node*);

  // A name's hash as the keys hold it: never kEmpty or kTombstone.
  static uint32_t Stored(uint32_t hash) {
    return hash > kTombstone ? hash : hash + 2;
  }
  size_t Mask() const { return capacity_ - 1; }
  size_t Next(size_t i) const { return (i + 1) & Mask(); }
  size_t Prev(size_t i) const { return (i - 1) & Mask(); }
  // The top bits of the hash times 2^64 / phi (Fibonacci hashing), so
  // hashes that differ only in their high bits still spread.
  size_t Home(uint32_t stored) const {
    return static_cast<size_t>((uint64_t{stored} * 0x9E3779B97F4A7C15u) >>
                               shift_);
  }

  // New arrays holding only the entries, at most half full once the next
  // entry is in (so at least a quarter of them can be filled before the
  // next rebuild), the same size as now when that is enough; the old ones
  // are kept until nothing can fail. Both arrays are one block.
  void Rebuild() {
    size_t capacity = capacity_ == 0 ? kMinCapacity : capacity_;
    while ((size_ + 1) * 2 > capacity) {
      capacity *= capacity < kQuadrupleBelow ? 4 : 2;
    }
    if (capacity > std::numeric_limits<size_t>::max() / kSlotBytes) {
      throw std::length_error("NameTable: too many entries");
    }
    LargeBlock block = AllocateLargeBlock(capacity * kSlotBytes);
    Key* keys = reinterpret_cast<Key*>(block.get());
    const Node** nodes =
        reinterpret_cast<const Node**>(block.get() + capacity * sizeof(Key));
    std::uninitialized_value_construct_n(keys, capacity);  // all empty
    std::uninitialized_value_construct_n(nodes, capacity);
    // Nothing below can fail.
    LargeBlock old_block = std::exchange(block_, std::move(block));
    const Key* old_keys = std::exchange(keys_, keys);
    const Node* const* old_nodes = std::exchange(nodes_, nodes);
    const size_t old_capacity = std::exchange(capacity_, capacity);
    shift_ = 64 - std::countr_zero(capacity);  // capacity is a power of 2
    used_ = size_;
    for (size_t j = 0; j < old_capacity; ++j) {
      if (old_keys[j].hash <= kTombstone) continue;
      size_t i = Home(old_keys[j].hash);
      while (keys_[i].hash != kEmpty) i = Next(i);
      keys_[i] = old_keys[j];
      nodes_[i] = old_nodes[j];
    }
  }

  // One block: capacity_ keys, then capacity_ node pointers.
  LargeBlock block_;
  Key* keys_ = nullptr;
  const Node** nodes_ = nullptr;
  size_t capacity_ = 0;  // a power of two, or 0
  int shift_ = 64;       // 64 - log2(capacity_)
  size_t size_ = 0;      // entries
  size_t used_ = 0;      // entries and tombstones
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NAME_TABLE_H_
