#include "runtime/name_index.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gc/heap.h"
#include "runtime/name_table.h"
#include "runtime/node.h"

namespace graphgc {

// One top-level scope's live names.
// A gc::Object so that a group whose nodes all go can wait with them in the
// heap's unreclaimed list (NameIndex::Erase's `retire`).
struct NameGroup final : gc::Object {
  struct BaseInfo {
    int64_t live = 0;         // live nodes whose requested name was this
    int64_t next_suffix = 1;  // where uniquing starts probing
    uint32_t id = 0;          // its number in base_by_id
    bool touched = false;     // within Erase(): its count changed
  };
  using Bases = absl::node_hash_map<std::string, BaseInfo>;

  // One entry per node (runtime/name_table.h): the node (whose name is
  // the key, so names are not stored twice), 32 bits of the name's hash (so
  // rebuilding and sweeping never re-read the name), and a payload of the
  // node's slot and, for a uniqued name, its base's number (so a sweep of
  // the table tests and counts a leaving node without reading it).
  static constexpr int kSlotBits = 24;
  static constexpr uint32_t kSlotMask = (uint32_t{1} << kSlotBits) - 1;
  static_assert(gc::Heap::kMaxSlots <= (uint32_t{1} << kSlotBits),
                "a slot index must fit a payload's slot bits");
  // BaseTag(): a name given as requested (which may be a base's own name),
  // a uniqued name's base number plus one, or kBaseUnnumbered for a
  // uniqued name whose base's number does not fit (its node is read).
  static constexpr uint32_t kAsRequested = 0;
  static constexpr uint32_t kBaseUnnumbered = 0xff;
  static constexpr int kTags = 256;
  static uint32_t Payload(uint32_t slot, uint32_t base_tag) {
    return slot | base_tag << kSlotBits;
  }
  static uint32_t SlotOf(uint32_t payload) { return payload & kSlotMask; }
  static uint32_t BaseTag(uint32_t payload) { return payload >> kSlotBits; }
  static uint32_t NameHash(absl::string_view name) {
    return static_cast<uint32_t>(absl::Hash<absl::string_view>{}(name));
  }
  // The tag an entry holds for a uniqued name of base number `id`.
  static uint32_t TagOfBase(uint32_t id) {
    return id + 1 < kBaseUnnumbered ? id + 1 : kBaseUnnumbered;
  }
  // The entry named `name` (node == nullptr: none).
  NameTable<Node>::Item FindName(absl::string_view name) const {
    return names.Find(name, NameHash(name));
  }

  NameGroup(absl::string_view s, uint32_t i) : scope(s), id(i) {}

  // The entry of `base` in `bases`, made (and numbered) if there is none.
  BaseInfo& FindOrAddBase(absl::string_view base) {
    auto [it, added] = bases.try_emplace(base);
    if (added) {
      if (free_base_ids.empty()) {
        it->second.id = static_cast<uint32_t>(base_by_id.size());
        base_by_id.push_back(&*it);
      } else {
        it->second.id = free_base_ids.back();
        free_base_ids.pop_back();
        base_by_id[it->second.id] = &*it;
      }
    }
    return it->second;
  }
  void EraseBase(Bases::iterator it) {
    base_by_id[it->second.id] = nullptr;
    free_base_ids.push_back(it->second.id);
    bases.erase(it);
  }

  const std::string scope;
  const uint32_t id;  // NameIndex's number for it while it exists
  int64_t live = 0;
  // Within Erase(): how many of its names go, and whether its table keeps
  // the others in one pass (`sweep`) or the whole group goes (`dying`).
  int64_t leaving = 0;
  bool sweep = false;
  bool dying = false;
  // Its block from 1 MiB on (about 65,000 names) is in huge pages
  // (runtime/name_table.h takes it from AllocateLargeBlock): a
  // million-name table is tens of megabytes, too many 4 KiB faults to take
  // inside a resize.
  NameTable<Node> names;
  // Requested names that were uniqued (base_<k>): BaseInfo::live counts
  // the live uniqued nodes, and the entry lives while one does or while a
  // node named the base itself (requested so) lives, so next_suffix is
  // kept exactly as long as when every node of a base was counted. A base
  // only ever given unchanged has no entry: next_suffix 1, as if absent.
  // Node-based, so base_by_id can point at the entries: an entry's number
  // stays its own while it lives (a uniqued node's payload tag names it,
  // and keeps it alive by being counted in it), and is reused after.
  Bases bases;
  std::vector<Bases::value_type*> base_by_id;  // nullptr while free
  std::vector<uint32_t> free_base_ids;
};

namespace {

// Whether a live node of `group` is named `base` and asked for it.
bool HoldsOwnBase(const NameGroup& group, absl::string_view base) {
  const Node* node = group.FindName(base).node;
  return node != nullptr && node->base_length == node->name.size();
}

// Erases `base` once no uniqued node of it lives and no node is named it
// as requested (the rule NameGroup::bases states); otherwise keeps it.
void DropBaseIfUnused(NameGroup& group, NameGroup::Bases::iterator base) {
  if (base->second.live <= 0 && !HoldsOwnBase(group, base->first)) {
    group.EraseBase(base);
  }
}

}  // namespace

namespace {

absl::string_view TopScope(absl::string_view name) {
  const size_t slash = name.find('/');
  return slash == absl::string_view::npos ? absl::string_view()
                                          : name.substr(0, slash);
}

// Candidate `suffix` of a scope base: the base itself, then base_<suffix>.
std::string ScopeCandidate(absl::string_view base, int64_t suffix) {
  return suffix == 0 ? std::string(base) : absl::StrCat(base, "_", suffix);
}

}  // namespace

NameIndex::NameIndex() = default;
NameIndex::~NameIndex() = default;

const NameGroup* NameIndex::FindGroup(absl::string_view name) const {
  auto it = groups_.find(TopScope(name));
  return it == groups_.end() ? nullptr : it->second.get();
}

NameGroup* NameIndex::FindGroup(absl::string_view name) {
  if (last_group_ != nullptr && last_group_->scope == TopScope(name)) {
    return last_group_;
  }
  Group* group = const_cast<Group*>(std::as_const(*this).FindGroup(name));
  if (group != nullptr) last_group_ = group;
  return group;
}

std::optional<uint32_t> NameIndex::Find(absl::string_view name) const {
  const Group* group = FindGroup(name);
  if (group == nullptr) return std::nullopt;
  const NameTable<Node>::Item e = group->FindName(name);
  if (e.node == nullptr) return std::nullopt;
  return NameGroup::SlotOf(e.payload);
}

std::string NameIndex::Unique(absl::string_view base) const {
  // "base_k" has the top-level scope of "base": one group answers.
  const Group* group = FindGroup(base);
  if (group == nullptr || group->FindName(base).node == nullptr) {
    return std::string(base);
  }
  auto it = group->bases.find(base);
  for (int64_t k = it == group->bases.end() ? 1 : it->second.next_suffix;;
       ++k) {
    std::string candidate = absl::StrCat(base, "_", k);
    if (group->FindName(candidate).node == nullptr) return candidate;
  }
}

bool NameIndex::IsScopeInUse(absl::string_view scope) const {
  if (scope.empty()) return false;  // "" is the group of unscoped names
  if (scope.find('/') == absl::string_view::npos) {
    return groups_.contains(scope) || Contains(scope);
  }
  const Group* group = FindGroup(scope);
  if (group == nullptr) return false;
  const std::string prefix = absl::StrCat(scope, "/");
  return group->names.AnyOf([&](const Node* node) {
    return node->name == scope || absl::StartsWith(node->name, prefix);
  });
}

bool NameIndex::IsScopeTaken(absl::string_view scope) const {
  return reserved_.contains(scope) || IsScopeInUse(scope);
}

std::string NameIndex::ReserveScope(absl::string_view base,
                                    absl::string_view owner) {
  std::string name = FindFreeScope(base, /*take=*/true);
  Reservation& r = reserved_[name];
  if (r.holders++ == 0) r.owner = std::string(owner);
  return name;
}

std::optional<std::pair<std::string, std::string>> NameIndex::ReservedScopeOf(
    absl::string_view name) const {
  if (reserved_.empty()) return std::nullopt;
  for (size_t end = name.find('/');; end = name.find('/', end + 1)) {
    const absl::string_view scope = name.substr(0, end);
    auto it = reserved_.find(scope);
    if (it != reserved_.end()) {
      return std::make_pair(std::string(scope), it->second.owner);
    }
    if (end == absl::string_view::npos) return std::nullopt;
  }
}

std::string NameIndex::FirstFreeScope(absl::string_view base) {
  return FindFreeScope(base, /*take=*/false);
}

std::string NameIndex::FindFreeScope(absl::string_view base, bool take) {
  std::string name;
  if (base.find('/') != absl::string_view::npos) {
    // A nested scope: probed one suffix at a time (see the file comment).
    name = std::string(base);
    for (int64_t k = 1; IsScopeTaken(name); ++k) name = ScopeCandidate(base, k);
  } else {
    auto it = cursors_.try_emplace(base).first;
    ScopeCursor& cursor = it->second;
    bool found = false;
    while (!found && !cursor.freed.empty()) {
      const int64_t k = *cursor.freed.begin();
      name = ScopeCandidate(base, k);
      found = !IsScopeTaken(name);
      // A suffix taken again since it was freed is dropped: it is noted
      // again when it is freed again.
      if (!found || take) cursor.freed.erase(cursor.freed.begin());
    }
    if (!found) {
      while (IsScopeTaken(name = ScopeCandidate(base, cursor.next))) {
        ++cursor.next;
      }
      if (take) ++cursor.next;
    }
    if (static_cast<int64_t>(cursor.freed.size()) == cursor.next) {
      cursors_.erase(it);  // nothing below the cursor known taken: as new
    }
  }
  return name;
}

void NameIndex::ReleaseScope(absl::string_view name) {
  auto it = reserved_.find(name);
  if (it == reserved_.end() || --it->second.holders > 0) return;
  reserved_.erase(it);
  NoteScopeFreed(name);
}

void NameIndex::NoteScopeFreed(absl::string_view name) {
  if (cursors_.empty()) return;
  NoteSuffixFreed(name, 0);
  const size_t underscore = name.rfind('_');
  if (underscore == absl::string_view::npos || underscore + 1 >= name.size() ||
      name[underscore + 1] == '0') {
    return;  // no "_<k>" with k >= 1 as ScopeCandidate writes it
  }
  int64_t suffix = 0;
  if (absl::SimpleAtoi(name.substr(underscore + 1), &suffix) && suffix > 0 &&
      name.substr(underscore + 1).find_first_not_of("0123456789") ==
          absl::string_view::npos) {
    NoteSuffixFreed(name.substr(0, underscore), suffix);
  }
}

void NameIndex::NoteSuffixFreed(absl::string_view base, int64_t suffix) {
  auto it = cursors_.find(base);
  if (it == cursors_.end() || suffix >= it->second.next) return;
  ScopeCursor& cursor = it->second;
  cursor.freed.insert(suffix);
  if (static_cast<int64_t>(cursor.freed.size()) == cursor.next) {
    cursors_.erase(it);
  }
}

NameIndex::Lookup NameIndex::Look(absl::string_view name) {
  Lookup lookup;
  lookup.hash_ = NameGroup::NameHash(name);
  lookup.group_ = FindGroup(name);
  if (lookup.group_ == nullptr) return lookup;
  lookup.taken_ = lookup.group_->names.Find(name, lookup.hash_).node != nullptr;
  return lookup;
}

void NameIndex::Insert(Node& node, uint32_t slot) {
  InsertInGroup(node, slot, FindGroup(node.name),
                NameGroup::NameHash(node.name));
}

void NameIndex::Insert(Node& node, uint32_t slot, const Lookup& lookup) {
  assert(lookup.hash_ == NameGroup::NameHash(node.name));
  InsertInGroup(node, slot, lookup.group_, lookup.hash_);
}

void NameIndex::InsertInGroup(Node& node, uint32_t slot, Group* found,
                              uint32_t name_hash) {
  const absl::string_view name = node.name;
  const size_t chunk = slot >> kSlotChunkBits;
  if (chunk >= group_of_slot_.size()) group_of_slot_.resize(chunk + 1);
  if (group_of_slot_[chunk] == nullptr) {
    group_of_slot_[chunk] = std::make_unique<uint32_t[]>(kSlotChunk);
  }
  if (found == nullptr) {
    std::unique_ptr<Group>& owned = groups_[TopScope(name)];
    uint32_t id;
    if (!free_group_ids_.empty()) {
      id = free_group_ids_.back();
      free_group_ids_.pop_back();
    } else {
      // At most one group per live node, and slots are uint32_t.
      id = static_cast<uint32_t>(group_by_id_.size());
      group_by_id_.push_back(nullptr);
    }
    owned = std::make_unique<Group>(TopScope(name), id);
    group_by_id_[id] = owned.get();
    found = owned.get();
    last_group_ = found;
  }
  Group& group = *found;
  GroupNumberOfSlot(slot) = group.id;
  const absl::string_view base = name.substr(0, node.base_length);
  uint32_t base_tag = NameGroup::kAsRequested;
  if (name.size() > base.size()) {
    // Uniqued: base_<k>. A node that got its base unchanged needs no entry
    // (see NameGroup::bases), so most nodes cost no base string.
    NameGroup::BaseInfo& info = group.FindOrAddBase(base);
    ++info.live;
    int64_t suffix = 0;
    if (absl::SimpleAtoi(name.substr(base.size() + 1), &suffix)) {
      info.next_suffix = std::max(info.next_suffix, suffix + 1);
    }
    base_tag = NameGroup::TagOfBase(info.id);
  }
  group.names.Insert(&node, name_hash, NameGroup::Payload(slot, base_tag));
  ++group.live;
}

uint32_t& NameIndex::GroupNumberOfSlot(uint32_t slot) const {
  return group_of_slot_[slot >> kSlotChunkBits][slot & (kSlotChunk - 1)];
}

NameGroup& NameIndex::GroupOfSlot(uint32_t slot) const {
  return *group_by_id_[GroupNumberOfSlot(slot)];
}

void NameIndex::Erase(absl::Span<const NodeId> nodes,
                      absl::FunctionRef<Node&(uint32_t slot)> node_at) {
  Erase(nodes, node_at, [](std::unique_ptr<gc::Object>) {});
}

void NameIndex::Erase(
    absl::Span<const NodeId> nodes,
    absl::FunctionRef<Node&(uint32_t slot)> node_at,
    absl::FunctionRef<void(std::unique_ptr<gc::Object>)> retire) {
  // A group losing at least kSweepAtLeast names and a quarter of them, or
  // a sixteenth of a table too big for the cache (kBigTable entries, about
  // 6 MB), is swept in one pass over its table: below that, a lookup per
  // name costs less than reading the whole table (bench/gc_bench's young
  // collections cover the small-sweep side of the threshold).
  constexpr int64_t kSweepAtLeast = 64;
  constexpr int64_t kBigTable = int64_t{1} << 18;
  // Each leaving node's group comes from group_of_slot_, dense chunks the
  // sweep's ascending slots walk in order: the nodes of a group that dies
  // whole are never read here. Reading each node for its group would be
  // a cache miss per swept node, and a list of the groups fresh pages for
  // every big sweep.
  std::vector<Group*> touched;  // each group losing names, once
  for (NodeId id : nodes) {
    Group& group = GroupOfSlot(id.index);
    --group.live;
    if (group.leaving++ == 0) touched.push_back(&group);
  }
  // Decided once per group, not per node.
  std::vector<Group*> dead;
  std::vector<Group*> swept;
  bool looked_up = false;  // some group loses names one lookup each
  for (Group* group : touched) {
    if (group->live == 0) {
      // The whole group goes below: no per-node work.
      group->dying = true;
      dead.push_back(group);
      continue;
    }
    const int64_t size = static_cast<int64_t>(group->names.size());
    if (group->leaving >= kSweepAtLeast &&
        (group->leaving * 4 >= size ||
         (size >= kBigTable && group->leaving * 16 >= size))) {
      group->sweep = true;
      swept.push_back(group);
    } else {
      looked_up = true;
    }
  }
  if (!swept.empty()) {
    // The leaving slots as bits: the pass tests an entry by its slot
    // without reading its node. The bits cover every slot a node in the
    // index can have (those of group_of_slot_), so the test needs no range
    // check: one against the highest leaving slot was a branch that
    // mispredicted on half the entries when the survivors were the newer
    // half.
    std::vector<uint64_t> leaving(group_of_slot_.size() * kSlotChunk / 64, 0);
    for (NodeId id : nodes) {
      if (GroupOfSlot(id.index).sweep) {
        leaving[id.index / 64] |= uint64_t{1} << (id.index % 64);
      }
    }
    // A swept group's bases are kept in the same pass: a leaving uniqued
    // name counts its loss through its payload's base tag, without its node
    // being read (a cache miss per leaving node, a large share of a big
    // collection of uniqued names). Only a name given as
    // requested may hold a base itself, and is read when the group has
    // bases at all.
    std::vector<uint32_t> touched_bases;
    std::vector<const Node*> maybe_holders;
    std::vector<const Node*> unnumbered;
    for (Group* group : swept) {
      auto touch = [&](NameGroup::BaseInfo& info) {
        if (info.touched) return;
        info.touched = true;
        touched_bases.push_back(info.id);
      };
      const bool wants_holders = !group->bases.empty();
      // The pass (NameTable::EraseIf) has no branch on the data, and
      // neither has this test of each slot: the leaving bit and each tag's
      // count are arithmetic (the counts in four interleaved rows, so that
      // neighbouring entries of one base do not wait on each other's
      // store), and whether a leaving node must be read (the rare tags
      // above) comes from a table, not a test of the tag: a slot without
      // an entry has tag 0, and a test of it was a branch on whether the
      // slot is empty.
      uint32_t loss[4][NameGroup::kTags] = {};
      uint8_t read_node[NameGroup::kTags] = {};
      read_node[NameGroup::kAsRequested] = wants_holders;
      read_node[NameGroup::kBaseUnnumbered] = 1;
      group->names.EraseIf([&](uint32_t payload, bool full, size_t index) {
        const uint32_t slot = NameGroup::SlotOf(payload);
        const uint32_t kill =
            full & static_cast<uint32_t>(leaving[slot / 64] >> (slot % 64));
        const uint32_t tag = NameGroup::BaseTag(payload);
        loss[index % 4][tag] += kill;
        if (kill & read_node[tag]) [[unlikely]] {
          (tag == NameGroup::kBaseUnnumbered ? unnumbered : maybe_holders)
              .push_back(group->names.NodeAt(index));
        }
        return kill != 0;
      });
      for (uint32_t tag = 1; tag < NameGroup::kBaseUnnumbered; ++tag) {
        const int64_t lost =
            int64_t{loss[0][tag]} + loss[1][tag] + loss[2][tag] + loss[3][tag];
        if (lost == 0) continue;
        NameGroup::BaseInfo& info = group->base_by_id[tag - 1]->second;
        info.live -= lost;
        touch(info);
      }
      for (const Node* node : maybe_holders) {
        auto base = group->bases.find(node->name);
        if (base != group->bases.end()) touch(base->second);
      }
      for (const Node* node : unnumbered) {
        auto base = group->bases.find(
            absl::string_view(node->name).substr(0, node->base_length));
        if (base == group->bases.end()) continue;  // counted in it: not reached
        --base->second.live;
        touch(base->second);
      }
      // Each base whose count changed is settled once, after the pass.
      for (uint32_t base_id : touched_bases) {
        auto base = group->bases.find(group->base_by_id[base_id]->first);
        base->second.touched = false;
        DropBaseIfUnused(*group, base);
      }
      touched_bases.clear();
      maybe_holders.clear();
      unnumbered.clear();
    }
  }
  // When every group losing names dies whole or is swept above, and no
  // cursor may want an unscoped name back, no node is visited at all.
  const bool visit = looked_up || !cursors_.empty();
  for (NodeId id : visit ? nodes : absl::Span<const NodeId>()) {
    Group& group = GroupOfSlot(id.index);
    const bool unscoped = group.scope.empty() && !cursors_.empty();
    const bool done = group.dying || group.sweep;
    if (done && !unscoped) continue;  // the node is not read
    const Node* node = &node_at(id.index);
    // An unscoped name may be a scope name some cursor skipped.
    if (unscoped) NoteScopeFreed(node->name);
    if (done) continue;
    const absl::string_view name = node->name;
    group.names.Erase(NameGroup::NameHash(name), id.index,
                      NameGroup::kSlotMask);
    const absl::string_view base_name = name.substr(0, node->base_length);
    auto base = group.bases.find(base_name);
    if (base == group.bases.end()) continue;
    // A uniqued node counts in its base; the node named the base itself
    // (its entry erased above) only keeps the base while it lives.
    if (name.size() > base_name.size()) --base->second.live;
    DropBaseIfUnused(group, base);
  }
  for (Group* group : touched) group->leaving = 0;  // counted and used above
  for (Group* group : swept) group->sweep = false;
  for (Group* group : dead) {
    if (group == last_group_) last_group_ = nullptr;
    if (!group->scope.empty()) NoteScopeFreed(group->scope);
    group_by_id_[group->id] = nullptr;
    free_group_ids_.push_back(group->id);
    auto it = groups_.find(group->scope);
    std::unique_ptr<gc::Object> unlinked = std::move(it->second);
    groups_.erase(it);
    retire(std::move(unlinked));
  }
}

size_t NameIndex::size() const {
  size_t n = groups_.size() + reserved_.size() + cursors_.size();
  for (const auto& [base, cursor] : cursors_) n += cursor.freed.size();
  for (const auto& [scope, group] : groups_) {
    n += group->names.size() + group->bases.size();
  }
  return n;
}

}  // namespace graphgc
