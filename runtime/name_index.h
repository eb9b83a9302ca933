// runtime/name_index.h
//
// NameIndex: a graph's name table. It finds the live node of a name, picks
// unique names (TensorFlow's rule: the requested name if free, else
// name_1, name_2, ..., starting after the highest suffix given for that
// name among live nodes) and says whether a scope is in use.
//
// Names are grouped by top-level scope (the text before the first '/', or
// "" for a name without one); each group has its own small tables and
// every node points to its group. A model's nodes share a few top-level
// scopes ("sequential_3", "dense_6", ...), so when a collection sweeps a
// dropped model its groups die whole: they are freed with no lookup per
// node, and the nodes of groups that live on are looked up in tables the
// size of their scope, not of the graph. Removing a model's names costs
// the same with 200 models alive as with one.
//
// Scopes held for owners: ReserveScope() hands out Keras-style scope names
// (`base`, then base_1, base_2, ...: the first one not taken, where taken
// means reserved, or a live node is named it or lives under it) and holds
// them until ReleaseScope(). For a top-level base (no '/') this costs O(1)
// amortised however many scopes of that base live: each base keeps a cursor
// below which every suffix was taken when last looked at, plus the suffixes
// below it that were freed since (a released reservation, a swept scope, a
// swept unscoped node of that name), smallest first; freed names are reused
// smallest first, as when every suffix was probed from 1. A nested base
// ("outer/dense") is probed suffix by suffix.
//
// Invariants: a node is in the index from Insert() to Erase(), under its
// name, in the group of its top-level scope, and the group numbered
// GroupNumberOfSlot(its slot) is that group; a group exists exactly while it
// has a node, and its number is free for another group after that. For each
// base with a cursor, every suffix below the cursor that is not taken is among
// its freed suffixes, and a cursor exists only while some suffix below it
// is not among them (so cursors are bounded by the names taken).
// Not thread-safe: the graph calls it under its mutex.
#ifndef GRAPHGC_RUNTIME_NAME_INDEX_H_
#define GRAPHGC_RUNTIME_NAME_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gc/node_id.h"

namespace graphgc {

struct Node;       // runtime/node.h
struct NameGroup;  // name_index.cc
namespace gc {
class Object;  // gc/heap.h
}  // namespace gc

class NameIndex {
 public:
  NameIndex();
  ~NameIndex();
  NameIndex(const NameIndex&) = delete;
  NameIndex& operator=(const NameIndex&) = delete;

  // The slot of the live node named `name`.
  std::optional<uint32_t> Find(absl::string_view name) const;
  bool Contains(absl::string_view name) const { return Find(name).has_value(); }
  // The name a node asking for `base` gets.
  std::string Unique(absl::string_view base) const;
  // Whether a live node is named `scope` or has a name under "scope/".
  bool IsScopeInUse(absl::string_view scope) const;

  // --- scopes held for owners (see the file comment) ---

  // Whether `scope` is reserved, or IsScopeInUse(scope).
  bool IsScopeTaken(absl::string_view scope) const;
  // `base` if it is not taken, else the first of base_1, base_2, ... that is
  // not; reserves it for `owner` (a label, may be empty) until
  // ReleaseScope(name).
  std::string ReserveScope(absl::string_view base, absl::string_view owner);
  // The reserved scope a node named `name` would be in (`name` itself or a
  // prefix of it ending before a '/'), outermost first, with its owner label.
  std::optional<std::pair<std::string, std::string>> ReservedScopeOf(
      absl::string_view name) const;
  // The name ReserveScope(base) would give now; reserves nothing.
  std::string FirstFreeScope(absl::string_view base);
  // Ends a reservation ReserveScope made.
  void ReleaseScope(absl::string_view name);

  // Adds `node` (its name set, name.substr(0, base_length) the name it
  // asked for) living in `slot`.
  void Insert(Node& node, uint32_t slot);

  // A name looked up once for both questions a new node asks: whether it
  // is taken (Contains), and where it goes (Insert): its top-level scope's
  // group and its hash, which Insert would otherwise find again. Valid
  // until the index next changes.
  class Lookup {
   public:
    bool taken() const { return taken_; }

   private:
    friend class NameIndex;
    NameGroup* group_ = nullptr;  // nullptr: no live name has its scope
    uint32_t hash_ = 0;           // NameGroup::NameHash of the name
    bool taken_ = false;
  };
  Lookup Look(absl::string_view name);
  // Insert(node, slot) for a node named exactly what `lookup` looked up,
  // with no change to the index since.
  void Insert(Node& node, uint32_t slot, const Lookup& lookup);

  // Removes the nodes in the slots of `nodes` (the ids a sweep lists),
  // each in the index and still intact; node_at(slot) is the node in a
  // slot, read only when its group lives on or unscoped names are erased
  // while a scope cursor exists: a group whose nodes all go is found by
  // their slots and goes whole. A group losing few of its names loses them
  // one lookup each; one losing many (a quarter, or a sixteenth of a table
  // bigger than the cache) keeps its other names in one pass over its
  // table, which reads the table in order instead of once per name at
  // random.
  // A group whose nodes all go is destroyed before Erase returns.
  void Erase(absl::Span<const NodeId> nodes,
             absl::FunctionRef<Node&(uint32_t slot)> node_at);
  // As above, but each group whose nodes all go is handed to `retire` once
  // it is unlinked (nothing in the index reaches it then, and destroying it
  // reads no node), so the caller can destroy its tables later, as a lazy
  // sweep does its nodes: a dropped model's name tables are then freed by
  // the allocation that follows, not inside the collection's pause.
  void Erase(absl::Span<const NodeId> nodes,
             absl::FunctionRef<Node&(uint32_t slot)> node_at,
             absl::FunctionRef<void(std::unique_ptr<gc::Object>)> retire);

  // Entries in all tables, for tests that bookkeeping stays bounded.
  size_t size() const;
  // Group numbers handed out, in use or free again (for tests).
  size_t GroupNumbersForTesting() const { return group_by_id_.size(); }

 private:
  // A top-level scope's names (defined in name_index.cc).
  using Group = NameGroup;

  // Where ReserveScope of one top-level base looks next (file comment).
  struct ScopeCursor {
    int64_t next = 0;                // suffix 0 is the base itself
    absl::btree_set<int64_t> freed;  // below `next`, may be free again
  };

  // The group of `name`'s top-level scope, or nullptr. The non-const one
  // (for Look and Insert, which change the index) tries last_group_ first.
  const Group* FindGroup(absl::string_view name) const;
  Group* FindGroup(absl::string_view name);
  // Insert's work once `group` (nullptr: to be made) and the name's hash
  // are known.
  void InsertInGroup(Node& node, uint32_t slot, Group* group,
                     uint32_t name_hash);
  // The group (number) of the node in `slot` (which must be in the index).
  uint32_t& GroupNumberOfSlot(uint32_t slot) const;
  Group& GroupOfSlot(uint32_t slot) const;
  // The first free suffix of `base`; with `take`, reserved as well.
  std::string FindFreeScope(absl::string_view base, bool take);
  // `name` may have stopped being taken: remember it for the cursors of
  // the bases it is a candidate of (itself, and X of X_<k>).
  void NoteScopeFreed(absl::string_view name);
  void NoteSuffixFreed(absl::string_view base, int64_t suffix);

  absl::flat_hash_map<std::string, std::unique_ptr<Group>> groups_;
  struct Reservation {
    int64_t holders = 0;
    std::string owner;  // of the first holder
  };
  absl::flat_hash_map<std::string, Reservation> reserved_;
  absl::flat_hash_map<std::string, ScopeCursor> cursors_;
  // Each slot's group number (Group::id), so Erase finds a swept node's
  // group without reading the node: valid for the slots of nodes in the
  // index. 4 bytes per slot, in chunks of kSlotChunk slots that never
  // move, as the heap's slots do: one growing array would copy itself (up
  // to 64 MB for the heap's 16.7M slots) inside whichever Insert outgrew
  // it.
  static constexpr int kSlotChunkBits = 12;
  static constexpr uint32_t kSlotChunk = 1u << kSlotChunkBits;
  std::vector<std::unique_ptr<uint32_t[]>> group_of_slot_;
  // Group numbers: the live group of each (nullptr while free), and the
  // free ones, reused first.
  std::vector<Group*> group_by_id_;
  std::vector<uint32_t> free_group_ids_;
  // The group the non-const FindGroup found or InsertInGroup made last
  // (nullptr once it dies): a model's nodes are added one scope at a time,
  // so most lookups compare one scope name instead of hashing it. Written
  // only by the methods that change the index (under the graph's writer
  // lock), read by them as well.
  Group* last_group_ = nullptr;
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NAME_INDEX_H_
