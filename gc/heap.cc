#include "gc/heap.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "gc/handle.h"

namespace graphgc {
namespace gc {

absl::StatusOr<NodeHandle> Heap::Allocate(std::unique_ptr<Object> object,
                                          absl::Span<const uint32_t> edges) {
  mu_.AssertHeld();
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    if (num_slots_ >= kMaxSlots) {
      return absl::ResourceExhaustedError(
          absl::StrCat("graph is full: ", kMaxSlots, " live nodes"));
    }
    index = num_slots_++;
    auto& chunk = chunks_[index >> kChunkBits];
    if (chunk == nullptr) chunk = std::make_unique<Slot[]>(kChunkSize);
  }
  Slot& s = slot(index);
  s.live = true;
  s.young.store(true, std::memory_order_relaxed);
  s.survived = 0;
  s.mark_epoch = 0;
  s.edges.assign(edges.begin(), edges.end());
  s.object = std::move(object);
  if (++live_count_ > peak_live_) peak_live_ = live_count_;
  const NodeId id{index, s.generation};
  young_.push_back(
      YoungEntry{id, allocations_.fetch_add(1, std::memory_order_acq_rel) + 1});
  return NewHandle(id);
}

void Heap::AddEdge(uint32_t from, uint32_t to) {
  mu_.AssertHeld();
  slot(from).edges.push_back(to);
  if (!slot(from).young && slot(to).young) remembered_.push_back(IdOf(to));
}

int64_t Heap::AgeSurvivors(int promote_after) {
  mu_.AssertHeld();
  int64_t promoted = 0;
  size_t kept = 0;
  for (const YoungEntry& e : young_) {
    if (!IsLive(e.id)) continue;
    Slot& s = slot(e.id.index);
    if (++s.survived >= promote_after) {
      s.young.store(false, std::memory_order_relaxed);
      ++promoted;
    } else {
      young_[kept++] = e;
    }
  }
  young_.resize(kept);
  size_t still_young = 0;
  for (NodeId id : remembered_) {
    if (IsYoung(id)) remembered_[still_young++] = id;
  }
  remembered_.resize(still_young);
  // Do not let one burst of allocation pin huge lists forever.
  if (young_.capacity() > (size_t{1} << 20) && kept < young_.capacity() / 4) {
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
  s.edges = {};  // release the out-of-line buffer, if any
  // Generations skip 0 so that a default NodeId never names a slot.
  if (++s.generation == 0) s.generation = 1;
  free_.push_back(index);
  --live_count_;
  ++frees_;
  if (!keep) object.reset();
  return object;
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
  s.strong.fetch_add(1, std::memory_order_relaxed);
  return NodeHandle(const_cast<Heap*>(this), &s, id);
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
  young_ = {};
  remembered_ = {};
}

uint32_t Heap::AddLabelRef(uint32_t index, absl::string_view text) {
  uint32_t label;
  {
    WriterLock l(labels_mu_);
    auto [it, inserted] =
        label_ids_.try_emplace(std::string(text), next_label_);
    if (inserted) {
      labels_[next_label_].text = std::string(text);
      if (++next_label_ == 0) next_label_ = 1;
    }
    label = it->second;
    AddLabelRefLocked(index, label);
  }
  return label;
}

std::string Heap::LabelText(uint32_t label) const {
  ReaderLock l(labels_mu_);
  auto it = labels_.find(label);
  return it == labels_.end() ? std::string() : it->second.text;
}

void Heap::AddLabelRef(uint32_t index, uint32_t label) {
  WriterLock l(labels_mu_);
  AddLabelRefLocked(index, label);
}

void Heap::AddLabelRefLocked(uint32_t index, uint32_t label) {
  ++labels_[label].refs;
  auto& entries = slot_labels_[index];
  for (auto& [id, count] : entries) {
    if (id == label) {
      ++count;
      return;
    }
  }
  entries.emplace_back(label, 1);
}

void Heap::DropLabelRef(uint32_t index, uint32_t label) {
  WriterLock l(labels_mu_);
  auto it = slot_labels_.find(index);
  if (it != slot_labels_.end()) {
    auto& entries = it->second;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].first != label) continue;
      if (--entries[i].second == 0) entries.erase(entries.begin() + i);
      break;
    }
    if (entries.empty()) slot_labels_.erase(it);
  }
  auto lit = labels_.find(label);
  if (lit != labels_.end() && --lit->second.refs <= 0) {
    label_ids_.erase(lit->second.text);
    labels_.erase(lit);
  }
}

std::vector<std::pair<std::string, int32_t>> Heap::RootLabels(
    uint32_t index) const {
  std::vector<std::pair<std::string, int32_t>> out;
  int32_t labelled = 0;
  {
    ReaderLock l(labels_mu_);
    auto it = slot_labels_.find(index);
    if (it != slot_labels_.end()) {
      for (const auto& [id, count] : it->second) {
        out.emplace_back(labels_.at(id).text, count);
        labelled += count;
      }
    }
  }
  std::sort(out.begin(), out.end());
  const int32_t unlabelled = strong_count(index) - labelled;
  if (unlabelled > 0)
    out.emplace_back(std::string(kUnlabelledRoot), unlabelled);
  if (IsPinned(index)) out.emplace_back(std::string(kPinnedRoot), 1);
  return out;
}

size_t Heap::label_table_size() const {
  ReaderLock l(labels_mu_);
  return labels_.size() + label_ids_.size() + slot_labels_.size();
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
