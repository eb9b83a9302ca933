// gc/edge_list.h
//
// gc::EdgeList: a slot's out-edges (the slots of its node's inputs) in 16
// bytes. Up to kInline edges are kept in the list itself, the rest in one
// buffer it owns. absl::InlinedVector<uint32_t, 2> holds the same in 24
// bytes (a size_t size, a pointer and a size_t capacity), which made
// gc::Slot 48 bytes: every byte of a slot is read by marking and sweeping.
//
// Postconditions:
//  1. size() <= kMaxSize; a list is inline (no buffer) exactly while its
//     capacity is kInline.
//  2. clear() keeps the buffer; shrink_to_fit() on an empty list frees it.
//  3. Moves leave the source empty and inline; copies are not allowed (a
//     slot's edges are never copied).
// Not thread-safe: a slot's edges change under Heap::mu().
#ifndef GRAPHGC_GC_EDGE_LIST_H_
#define GRAPHGC_GC_EDGE_LIST_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/types/span.h"

namespace graphgc {
namespace gc {

class EdgeList {
 public:
  static constexpr uint32_t kInline = 2;
  // The most edges one list holds: a size and a capacity fit 32 bits, and
  // doubling a capacity up to this never overflows.
  static constexpr uint32_t kMaxSize = uint32_t{1} << 30;

  EdgeList() = default;
  ~EdgeList() { Free(); }
  EdgeList(const EdgeList&) = delete;
  EdgeList& operator=(const EdgeList&) = delete;
  EdgeList(EdgeList&& other) noexcept { MoveFrom(other); }
  EdgeList& operator=(EdgeList&& other) noexcept {
    if (this != &other) {
      Free();
      MoveFrom(other);
    }
    return *this;
  }

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint32_t capacity() const { return capacity_; }
  const uint32_t* data() const { return is_inline() ? inline_ : heap_; }
  const uint32_t* begin() const { return data(); }
  const uint32_t* end() const { return data() + size_; }
  uint32_t operator[](uint32_t i) const { return data()[i]; }
  absl::Span<const uint32_t> span() const { return {data(), size_}; }
  operator absl::Span<const uint32_t>() const { return span(); }

  // Replaces the edges with `edges`. Requires edges.size() <= kMaxSize.
  void assign(absl::Span<const uint32_t> edges) {
    const uint32_t n = static_cast<uint32_t>(edges.size());
    size_ = 0;  // nothing to carry over
    if (n <= kInline && is_inline()) {
      for (uint32_t i = 0; i < n; ++i) inline_[i] = edges[i];
    } else {
      // A list with a buffer keeps it; a bigger list gets one (so heap_).
      if (n > capacity_) Reallocate(n);
      if (n != 0) std::memcpy(heap_, edges.data(), n * sizeof(uint32_t));
    }
    size_ = n;
  }
  // Appends one edge. Requires size() < kMaxSize.
  void push_back(uint32_t edge) {
    if (size_ == capacity_) Reallocate(std::min(kMaxSize, 2 * capacity_));
    mutable_data()[size_++] = edge;
  }
  void clear() { size_ = 0; }
  // Frees an out-of-line buffer the edges no longer need.
  void shrink_to_fit() {
    if (is_inline() || size_ == capacity_) return;
    if (size_ <= kInline) {
      uint32_t* buffer = heap_;
      std::memcpy(inline_, buffer, size_ * sizeof(uint32_t));
      delete[] buffer;
      capacity_ = kInline;
      return;
    }
    Reallocate(size_);
  }

 private:
  bool is_inline() const { return capacity_ == kInline; }
  uint32_t* mutable_data() { return is_inline() ? inline_ : heap_; }

  // Moves the edges into a buffer of exactly `capacity` (> kInline, or the
  // inline storage when capacity <= kInline; never below size()).
  void Reallocate(uint32_t capacity) {
    if (capacity <= kInline) return;  // only reached from a bigger list
    auto buffer = std::make_unique<uint32_t[]>(capacity);
    std::memcpy(buffer.get(), data(), size_ * sizeof(uint32_t));
    Free();
    heap_ = buffer.release();
    capacity_ = capacity;
  }
  void Free() {
    if (!is_inline()) delete[] heap_;
    capacity_ = kInline;
  }
  void MoveFrom(EdgeList& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.is_inline()) {
      std::memcpy(inline_, other.inline_, sizeof(inline_));
    } else {
      heap_ = other.heap_;
    }
    other.size_ = 0;
    other.capacity_ = kInline;
  }

  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  union {
    uint32_t inline_[kInline] = {0, 0};
    uint32_t* heap_;
  };
};
static_assert(sizeof(EdgeList) == 16, "an edge list is 16 bytes");

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_EDGE_LIST_H_
