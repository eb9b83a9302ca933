#include "gc/heap.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "gc/handle.h"

namespace graphgc {
namespace gc {

absl::StatusOr<NodeHandle> Heap::Allocate(std::unique_ptr<Object> object,
                                          absl::Span<const uint32_t> edges) {
  mu_.AssertHeld();
  if (edges.size() > EdgeList::kMaxSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("a node may have at most ", EdgeList::kMaxSize,
                     " inputs; asked for ", edges.size()));
  }
  // What can throw (std::bad_alloc) comes before the heap changes, so a
  // failed allocation leaves it as it was: the edges' buffer (more than
  // EdgeList::kInline edges), room for the young entry (grown by doubling
  // here, so push_back below never allocates), then a new chunk below.
  EdgeList edge_list;
  edge_list.assign(edges);
  if (young_.size() == young_.capacity()) {
    young_.reserve(std::max<size_t>(kMinYoungCapacity, 2 * young_.capacity()));
  }
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    if (num_slots_ >= kMaxSlots) {
      return absl::ResourceExhaustedError(
          absl::StrCat("graph is full: ", kMaxSlots, " live nodes"));
    }
    index = num_slots_;
    auto& chunk = chunks_[index >> kChunkBits];
    if (chunk == nullptr) {
      // Before the count grows, so that a failed allocation (std::bad_alloc)
      // leaves every counted slot in a chunk (invariant 1).
      prompt_bits_.resize((size_t{index} + kChunkSize) / 64);
      chunk = NewChunk(index >> kChunkBits);
    }
    ++num_slots_;
  }
  uint64_t& prompt_word = prompt_bits_[index >> 6];
  const uint64_t prompt_bit = uint64_t{1} << (index & 63);
  if (object->DestroyPromptly()) {
    prompt_word |= prompt_bit;
  } else {
    prompt_word &= ~prompt_bit;
  }
  Slot& s = slot(index);
  s.live = true;
  s.young.store(true, std::memory_order_relaxed);
  s.mark_epoch = 0;
  s.edges = std::move(edge_list);
  s.object = std::move(object);
  if (++live_count_ > peak_live_) peak_live_ = live_count_;
  const NodeId id{index, s.generation};
  // Written only here, under mu_ held exclusively: a load and a store, not
  // a locked read-modify-write (one per node made).
  const int64_t serial = allocations_.load(std::memory_order_relaxed) + 1;
  allocations_.store(serial, std::memory_order_release);
  young_.push_back(YoungEntry{id, serial});
  return NewHandle(id);
}

void Heap::AddEdge(uint32_t from, uint32_t to) {
  mu_.AssertHeld();
  slot(from).edges.push_back(to);
  ++structure_version_;
  if (!slot(from).young && slot(to).young) remembered_.push_back(IdOf(to));
}

int64_t Heap::AgeSurvivors(int promote_after,
                           absl::Span<const NodeId> swept_young) {
  mu_.AssertHeld();
  promote_after = std::clamp(promote_after, 0, kMaxPromoteAfter);
  collection_serials_.push_back(allocations_.load(std::memory_order_relaxed));
  if (collection_serials_.size() > size_t{kMaxPromoteAfter}) {
    collection_serials_.erase(collection_serials_.begin());
  }
  // Entries up to `cutoff` have survived promote_after collections: the
  // node of serial s survived every collection whose count is >= s.
  int64_t cutoff = 0;
  if (promote_after == 0) {
    cutoff = std::numeric_limits<int64_t>::max();
  } else if (collection_serials_.size() >= size_t(promote_after)) {
    cutoff =
        collection_serials_[collection_serials_.size() - size_t(promote_after)];
  }
  int64_t promoted = 0;
  size_t end = 0;
  size_t next_swept = 0;  // into swept_young
  auto swept = [&](const YoungEntry& e) {
    if (next_swept < swept_young.size() && swept_young[next_swept] == e.id) {
      ++next_swept;
      return true;
    }
    return false;
  };
  // The promoted prefix is mostly in slot order, so its slots are read as
  // a stream; fetching them ahead keeps the loop from waiting on each one.
  constexpr size_t kPrefetchAhead = 64;
  const size_t count = young_.size();
  for (; end < count && young_[end].serial <= cutoff; ++end) {
    if (end + kPrefetchAhead < count) {
      const uint32_t ahead = young_[end + kPrefetchAhead].id.index;
      if (ahead < num_slots_) __builtin_prefetch(&slot(ahead), /*rw=*/1);
    }
    const YoungEntry& e = young_[end];
    if (swept(e) || !IsLive(e.id)) continue;
    Slot& s = slot(e.id.index);
    s.young.store(false, std::memory_order_relaxed);
    ++promoted;
    // A control edge (AddEdge) may have made it read a younger node that
    // stays young: from now on an old node reads it (invariant 4). Inputs
    // promoted later in this pass are dropped from the list below.
    for (uint32_t in : s.edges) {
      if (slot(in).young.load(std::memory_order_relaxed)) {
        remembered_.push_back(IdOf(in));
      }
    }
  }
  if (next_swept == swept_young.size()) {
    young_.erase(young_.begin(), young_.begin() + static_cast<ptrdiff_t>(end));
  } else {
    size_t kept = 0;
    for (size_t i = end; i < count; ++i) {
      if (!swept(young_[i])) young_[kept++] = young_[i];
    }
    young_.resize(kept);
  }
  size_t still_young = 0;
  for (NodeId id : remembered_) {
    if (IsYoung(id)) remembered_[still_young++] = id;
  }
  remembered_.resize(still_young);
  // Do not let one burst of allocation pin huge lists forever.
  if (young_.capacity() > (size_t{1} << 20) &&
      young_.size() < young_.capacity() / 4) {
    young_.shrink_to_fit();
  }
  return promoted;
}

std::unique_ptr<Object> Heap::Free(uint32_t index, bool keep) {
  mu_.AssertHeld();
  Slot& s = slot(index);
  std::unique_ptr<Object> object = std::move(s.object);
  s.live = false;
  s.young.store(false, std::memory_order_relaxed);
  // Empties the edges and releases their out-of-line buffer, if any.
  s.edges.clear();
  s.edges.shrink_to_fit();
  // Generations skip 0 so that a default NodeId never names a slot.
  if (++s.generation == 0) s.generation = 1;
  free_.push_back(index);
  --live_count_;
  ++structure_version_;
  if (!keep) object.reset();
  return object;
}

void Heap::DestroySlots::operator()(Slot* chunk) const noexcept {
  std::destroy_n(chunk, kChunkSize);
}

std::unique_ptr<Slot[], Heap::DestroySlots> Heap::NewChunk(uint32_t c) {
  mu_.AssertHeld();
  // The chunk's place in its block: a chunk alone is a block of one.
  const uint32_t in_block =
      c < kChunksAlone ? 0 : (c - kChunksAlone) % kChunksPerBlock;
  if (in_block == 0) {
    LargeBlock block =
        AllocateLargeBlock(c < kChunksAlone ? kChunkBytes : kChunkBlockBytes);
    chunk_memory_.push_back(std::move(block));
  }
  Slot* slots = reinterpret_cast<Slot*>(chunk_memory_.back().get() +
                                        size_t{in_block} * kChunkBytes);
  static_assert(std::is_nothrow_default_constructible_v<Slot>,
                "a chunk's memory is recorded before its slots are made");
  std::uninitialized_value_construct_n(slots, kChunkSize);
  return std::unique_ptr<Slot[], DestroySlots>(slots);
}

size_t Heap::TakeUnreclaimed(absl::Span<std::unique_ptr<Object>> out) {
  mu_.AssertHeld();
  const size_t n = std::min(out.size(), unreclaimed_.size());
  for (size_t i = 0; i < n; ++i) {
    out[i] = std::move(unreclaimed_.back());
    unreclaimed_.pop_back();
  }
  // A burst's list is not kept forever (1M entries is 8 MB).
  if (unreclaimed_.empty() && unreclaimed_.capacity() > (size_t{1} << 20)) {
    unreclaimed_ = ObjectList();
  }
  unreclaimed_count_.store(unreclaimed_.size(), std::memory_order_relaxed);
  return n;
}

void Heap::TakeAllUnreclaimed(ObjectList& out) {
  mu_.AssertHeld();
  if (out.empty()) {
    out.swap(unreclaimed_);
    unreclaimed_.clear();
  } else {
    out.insert(out.end(), std::make_move_iterator(unreclaimed_.begin()),
               std::make_move_iterator(unreclaimed_.end()));
    unreclaimed_ = ObjectList();
  }
  unreclaimed_count_.store(0, std::memory_order_relaxed);
}

bool Heap::IsLive(NodeId id) const {
  if (!id.valid() || id.index >= num_slots_) return false;
  const Slot& s = slot(id.index);
  return s.live && s.generation == id.generation;
}

NodeId Heap::IdOf(uint32_t index) const {
  return NodeId{index, slot(index).generation};
}

NodeHandle Heap::NewHandle(NodeId id) const {
  Slot& s = slot(id.index);
  // The caller's lock keeps the slot from being swept meanwhile.
  CountUp(home_, s.strong());
  return NodeHandle(const_cast<Heap*>(this), s.strong(), id, nullptr);
}

int64_t Heap::TotalStrongCount() const {
  int64_t total = 0;
  for (uint32_t i = 0; i < num_slots_; ++i) total += strong_count(i);
  return total;
}

void Heap::Orphan() {
  mu_.AssertHeld();
  owner_.store(nullptr, std::memory_order_release);
  for (uint32_t i = 0; i < num_slots_; ++i) {
    if (slot(i).live) Free(i, /*keep=*/false);
  }
  unreclaimed_ = ObjectList();
  unreclaimed_count_.store(0, std::memory_order_relaxed);
  young_ = {};
  remembered_ = {};
}

SlotLabel* Heap::AcquireLabel(uint32_t index, absl::string_view text) {
  WriterLock l(labels_mu_);
  auto& entries = slot_labels_[index];
  for (SlotLabel* e : entries) {
    if (*e->text == text) {
      // The entry may be at zero handles, its last handle on its way to
      // RemoveLabelIfUnused (which waits for this lock): count in `shared`.
      e->handles_shared.fetch_add(1, std::memory_order_relaxed);
      return e;
    }
  }
  auto [text_it, inserted] = label_texts_.try_emplace(std::string(text), 0);
  ++text_it->second;
  // The entry's root count; the caller's handle keeps the slot live.
  CountUp(home_, HeldSlot(index).strong());
  SlotLabel* entry;
  if (free_labels_.empty()) {
    entry = &label_entries_.emplace_back();
  } else {
    entry = free_labels_.back();
    free_labels_.pop_back();
  }
  entry->text = &text_it->first;
  // A reused entry's home part is left as its last handles left it: only
  // the home thread writes that part, and a drop on it may still read the
  // entry (SlotLabel). The shared part makes the sum one.
  entry->handles_shared.store(
      1 - entry->handles_home.load(std::memory_order_relaxed),
      std::memory_order_relaxed);
  entries.push_back(entry);
  return entry;
}

void Heap::RemoveLabelIfUnused(uint32_t index, const SlotLabel* label) {
  WriterLock l(labels_mu_);
  // Looked up, not trusted: another thread's last drop may have removed
  // the entry already, AcquireLabel may have revived it meanwhile, or
  // reused it for another label (SlotLabel).
  auto it = slot_labels_.find(index);
  if (it == slot_labels_.end()) return;
  auto& entries = it->second;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i] != label) continue;
    // A consistent read: at zero, no handle is left to copy, and
    // AcquireLabel waits for this lock, so it stays zero.
    if (ReadCount(home_, label->handles()) != 0) return;
    auto text_it = label_texts_.find(*label->text);
    SlotLabel* entry = entries[i];
    entries.erase(entries.begin() + i);
    entry->text = nullptr;
    free_labels_.push_back(entry);  // for reuse, never freed
    if (text_it != label_texts_.end() && --text_it->second == 0) {
      label_texts_.erase(text_it);
    }
    // The entry's root count, which kept the slot live until now.
    DropStrong(index);
    break;
  }
  if (entries.empty()) slot_labels_.erase(it);
}

std::vector<std::pair<std::string, int32_t>> Heap::RootLabels(
    uint32_t index) const {
  std::vector<std::pair<std::string, int32_t>> out;
  int32_t entries = 0;  // root counts held by label entries
  {
    ReaderLock l(labels_mu_);
    auto it = slot_labels_.find(index);
    if (it != slot_labels_.end()) {
      for (const SlotLabel* e : it->second) {
        ++entries;
        const int32_t count = ReadCount(home_, e->handles());
        if (count <= 0) continue;  // its last handle is removing it
        out.emplace_back(*e->text, count);
      }
    }
  }
  std::sort(out.begin(), out.end());
  const int32_t unlabelled = strong_count(index) - entries;
  if (unlabelled > 0)
    out.emplace_back(std::string(kUnlabelledRoot), unlabelled);
  if (IsPinned(index)) out.emplace_back(std::string(kPinnedRoot), 1);
  return out;
}

size_t Heap::label_table_size() const {
  ReaderLock l(labels_mu_);
  size_t entries = 0;
  for (const auto& [index, slot_entries] : slot_labels_) {
    entries += slot_entries.size();
  }
  return label_texts_.size() + entries + slot_labels_.size();
}

uint64_t Heap::Pin(std::vector<uint32_t> slots) {
  WriterLock l(pins_mu_);
  uint64_t id = next_pin_++;
  pins_.emplace(id, std::move(slots));
  return id;
}

void Heap::Unpin(uint64_t pin) {
  WriterLock l(pins_mu_);
  pins_.erase(pin);
}

bool Heap::IsPinned(uint32_t index) const {
  ReaderLock l(pins_mu_);
  for (const auto& [id, slots] : pins_) {
    if (std::find(slots.begin(), slots.end(), index) != slots.end()) {
      return true;
    }
  }
  return false;
}

void Heap::AppendPinned(std::vector<uint32_t>& out) const {
  ReaderLock l(pins_mu_);
  for (const auto& [id, slots] : pins_)
    out.insert(out.end(), slots.begin(), slots.end());
}

size_t Heap::pin_count() const {
  ReaderLock l(pins_mu_);
  return pins_.size();
}

}  // namespace gc
}  // namespace graphgc
