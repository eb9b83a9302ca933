// gc/pin.h
//
// PinScope: keeps a set of nodes alive for the length of a scope, as roots
// labelled kPinnedRoot. Session::Run pins its plan's nodes this way, so a
// collection running meanwhile cannot sweep a node a kernel is using, while
// a cached plan (which holds only ids) never keeps its nodes alive by
// itself. Move-only; unpins on destruction. PinIds() makes one.
#ifndef GRAPHGC_GC_PIN_H_
#define GRAPHGC_GC_PIN_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "gc/heap.h"
#include "gc/node_id.h"

namespace graphgc {
namespace gc {

class PinScope {
 public:
  PinScope() = default;
  PinScope(std::shared_ptr<Heap> heap, uint64_t pin)
      : heap_(std::move(heap)), pin_(pin) {}
  PinScope(PinScope&& other) noexcept
      : heap_(std::move(other.heap_)), pin_(std::exchange(other.pin_, 0)) {}
  PinScope& operator=(PinScope&& other) noexcept {
    if (this != &other) {
      Release();
      heap_ = std::move(other.heap_);
      pin_ = std::exchange(other.pin_, 0);
    }
    return *this;
  }
  ~PinScope() { Release(); }

  bool active() const { return pin_ != 0; }

 private:
  void Release() {
    if (heap_ != nullptr && pin_ != 0) heap_->Unpin(pin_);
    pin_ = 0;
    heap_.reset();
  }

  std::shared_ptr<Heap> heap_;
  uint64_t pin_ = 0;
};

// Pins the slots of `ids`, which the caller found live (or knows to be) with
// the heap's mutex held, as it still is: no collection frees them between
// that check and the pin.
inline PinScope PinIds(Heap& heap, absl::Span<const NodeId> ids)
    ABSL_SHARED_LOCKS_REQUIRED(heap.mu()) {
  std::vector<uint32_t> slots;
  slots.reserve(ids.size());
  for (NodeId id : ids) slots.push_back(id.index);
  return PinScope(heap.shared_from_this(), heap.Pin(std::move(slots)));
}

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_PIN_H_
