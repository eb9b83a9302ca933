#include "util/fixed_size_pool.h"

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

// Its ASAN_(UN)POISON_MEMORY_REGION do nothing outside AddressSanitizer
// builds.
#include <sanitizer/asan_interface.h>

namespace graphgc {
namespace {

constexpr size_t kAlign = alignof(std::max_align_t);

size_t RoundUpToAlign(size_t size) {
  return (size + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

FixedSizePool::FixedSizePool(size_t size) : block_size_(RoundUpToAlign(size)) {
  // Checked on `size`, before rounding can wrap: a zero block would divide
  // by zero below, and one past a slab would run off its end.
  if (size == 0 || size > kSlabBytes) {
    throw std::length_error("FixedSizePool: block size " +
                            std::to_string(size) + " is not in [1, " +
                            std::to_string(kSlabBytes) + "]");
  }
}

void* FixedSizePool::Allocate() {
  ExclusiveLock lock(mu_);
  if (free_ != nullptr) {
    FreeBlock* block = free_;
    ASAN_UNPOISON_MEMORY_REGION(block, block_size_);
    free_ = block->next;
    return block;
  }
  if (next_ == end_) {
    // Slabs are aligned for any fundamental type (AllocateLarge), and
    // block_size_ is a multiple of that alignment.
    const size_t bytes =
        slab_bytes_ >= kHugePageBytes ? kHugePageBytes : kSlabBytes;
    // Kept before it is used, so a failed push_back leaves nothing behind.
    LargeBlock slab = AllocateLargeBlock(bytes);
    slabs_.push_back(std::move(slab));
    slab_bytes_ += bytes;
    next_ = slabs_.back().get();
    end_ = next_ + bytes / block_size_ * block_size_;
    ASAN_POISON_MEMORY_REGION(next_, bytes);
  }
  char* block = next_;
  next_ += block_size_;
  ASAN_UNPOISON_MEMORY_REGION(block, block_size_);
  return block;
}

void FixedSizePool::Free(void* block) {
  if (block == nullptr) return;
  ExclusiveLock lock(mu_);
  FreeBlock* freed = static_cast<FreeBlock*>(block);
  freed->next = free_;
  free_ = freed;
  ASAN_POISON_MEMORY_REGION(block, block_size_);
}

size_t FixedSizePool::SlabsForTesting() const {
  ExclusiveLock lock(mu_);
  return slabs_.size();
}

size_t FixedSizePool::SlabBytesForTesting() const {
  ExclusiveLock lock(mu_);
  return slab_bytes_;
}

}  // namespace graphgc
