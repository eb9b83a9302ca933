#include "gc/handle.h"

#include "gc/heap.h"
#include "util/mutex.h"

namespace graphgc {

NodeHandle::NodeHandle(gc::Heap* heap, gc::Slot* slot, NodeId id)
    : heap_(heap), slot_(slot), id_(id) {}

NodeHandle::NodeHandle(const NodeHandle& other)
    : heap_(other.heap_),
      slot_(other.slot_),
      id_(other.id_),
      label_(other.label_) {
  Acquire();
}

NodeHandle& NodeHandle::operator=(const NodeHandle& other) {
  if (this == &other) return *this;
  NodeHandle copy(other);
  *this = std::move(copy);
  return *this;
}

NodeHandle& NodeHandle::operator=(NodeHandle&& other) noexcept {
  if (this == &other) return *this;
  Release();
  heap_ = std::exchange(other.heap_, nullptr);
  slot_ = std::exchange(other.slot_, nullptr);
  id_ = std::exchange(other.id_, NodeId());
  label_ = std::exchange(other.label_, nullptr);
  return *this;
}

void NodeHandle::Acquire() {
  if (slot_ == nullptr) return;
  // Relaxed is enough: the source handle already keeps the count above
  // zero, so no collection can observe the transition.
  // One counter either way: a labelled handle counts in its label's entry,
  // which holds the slot's root count for all of them.
  if (label_ != nullptr) {
    label_->handles.fetch_add(1, std::memory_order_relaxed);
  } else {
    slot_->strong.fetch_add(1, std::memory_order_relaxed);
  }
}

void NodeHandle::Release() {
  if (slot_ == nullptr) return;
  // A labelled handle's last drop removes its label's entry, and with it
  // the entry's root count (under the heap's label lock).
  if (label_ != nullptr) {
    heap_->ReleaseLabel(id_.index, label_);
  } else {
    heap_->DropStrong(*slot_);
  }
  heap_ = nullptr;
  slot_ = nullptr;
  id_ = NodeId();
  label_ = nullptr;
}

Graph* NodeHandle::graph() const {
  return heap_ == nullptr ? nullptr : heap_->owner();
}

NodeHandle NodeHandle::WithOwner(absl::string_view owner) const {
  if (slot_ == nullptr) return NodeHandle();
  NodeHandle copy(heap_, slot_, id_);
  if (owner.empty()) {
    slot_->strong.fetch_add(1, std::memory_order_relaxed);
  } else {
    copy.label_ = heap_->AcquireLabel(id_.index, owner);
  }
  return copy;
}

std::string NodeHandle::owner() const {
  // The entry, and so its text, lives while this handle counts on it.
  if (slot_ == nullptr || label_ == nullptr) return "";
  return *label_->text;
}

WeakNodeHandle::WeakNodeHandle(const NodeHandle& strong) : id_(strong.id()) {
  if (strong.valid()) heap_ = strong.heap_->weak_from_this();
}

std::optional<NodeHandle> WeakNodeHandle::Lock() const {
  std::shared_ptr<gc::Heap> heap = heap_.lock();
  if (heap == nullptr) return std::nullopt;
  ReaderLock l(heap->mu());
  if (!heap->IsLive(id_)) return std::nullopt;
  return heap->NewHandle(id_);
}

}  // namespace graphgc
