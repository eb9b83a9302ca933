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
  label_ = std::exchange(other.label_, 0);
  return *this;
}

void NodeHandle::Acquire() {
  if (slot_ == nullptr) return;
  // Relaxed is enough: the source handle already keeps the count above
  // zero, so no collection can observe the transition.
  slot_->strong.fetch_add(1, std::memory_order_relaxed);
  if (label_ != 0) heap_->AddLabelRef(id_.index, label_);
}

void NodeHandle::Release() {
  if (slot_ == nullptr) return;
  if (label_ != 0) heap_->DropLabelRef(id_.index, label_);
  if (slot_->strong.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    heap_->NoteDrop(*slot_);
  }
  heap_ = nullptr;
  slot_ = nullptr;
  id_ = NodeId();
  label_ = 0;
}

Graph* NodeHandle::graph() const {
  return heap_ == nullptr ? nullptr : heap_->owner();
}

NodeHandle NodeHandle::WithOwner(absl::string_view owner) const {
  NodeHandle copy(*this);
  if (copy.slot_ == nullptr) return copy;
  if (copy.label_ != 0) copy.heap_->DropLabelRef(copy.id_.index, copy.label_);
  copy.label_ = owner.empty() ? 0 : heap_->AddLabelRef(copy.id_.index, owner);
  return copy;
}

std::string NodeHandle::owner() const {
  if (slot_ == nullptr || label_ == 0) return "";
  return heap_->LabelText(label_);
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
