#include "gc/handle.h"

#include "gc/heap.h"
#include "util/mutex.h"

namespace graphgc {

void NodeHandle::CountCopy() const { gc::CountUp(heap_->home(), count_); }

void NodeHandle::Uncount() const {
  if (label_ == nullptr) {
    // count_ is the slot's root count.
    heap_->NoteRootDrop(gc::CountDownRoot(heap_->home(), count_), id_.index);
  } else if (gc::CountDown(heap_->home(), count_)) {
    // The last handle of this label on this node: the entry goes, and with
    // it the root count it held (under the heap's label lock).
    heap_->RemoveLabelIfUnused(id_.index, label_);
  }
}

Graph* NodeHandle::graph() const {
  return heap_ == nullptr ? nullptr : heap_->owner();
}

NodeHandle NodeHandle::WithOwner(absl::string_view owner) const {
  if (!count_.valid()) return NodeHandle();
  if (owner.empty()) {
    // This handle keeps the slot live and in place, its count above zero.
    const gc::CountRef strong = heap_->HeldSlot(id_.index).strong();
    gc::CountUp(heap_->home(), strong);
    return NodeHandle(heap_, strong, id_, nullptr);
  }
  gc::SlotLabel* label = heap_->AcquireLabel(id_.index, owner);
  return NodeHandle(heap_, label->handles(), id_, label);
}

std::string NodeHandle::owner() const {
  // The entry, and so its text, lives while this handle counts on it.
  if (label_ == nullptr) return "";
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
