#include "util/fixed_size_pool.h"

#include <cassert>
#include <cstddef>
#include <memory>

#include "absl/base/config.h"

#ifdef ABSL_HAVE_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#define GG_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define GG_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define GG_POISON(p, n) ((void)(p), (void)(n))
#define GG_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace graphgc {
namespace {

constexpr size_t kAlign = alignof(std::max_align_t);

size_t RoundUpToAlign(size_t size) {
  return (size + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

FixedSizePool::FixedSizePool(size_t size) : block_size_(RoundUpToAlign(size)) {
  assert(size > 0 && size <= kSlabBytes);
}

void* FixedSizePool::Allocate() {
  WriterLock lock(mu_);
  if (free_ != nullptr) {
    FreeBlock* block = free_;
    GG_UNPOISON(block, block_size_);
    free_ = block->next;
    return block;
  }
  if (next_ == end_) {
    // Slabs of operator new[] are aligned for any fundamental type, and
    // block_size_ is a multiple of that alignment.
    // Kept before it is used, so a failed push_back leaves nothing behind.
    slabs_.push_back(std::make_unique_for_overwrite<char[]>(kSlabBytes));
    next_ = slabs_.back().get();
    end_ = next_ + kSlabBytes / block_size_ * block_size_;
    GG_POISON(next_, kSlabBytes);
  }
  char* block = next_;
  next_ += block_size_;
  GG_UNPOISON(block, block_size_);
  return block;
}

void FixedSizePool::Free(void* block) {
  if (block == nullptr) return;
  WriterLock lock(mu_);
  FreeBlock* freed = static_cast<FreeBlock*>(block);
  freed->next = free_;
  free_ = freed;
  GG_POISON(block, block_size_);
}

size_t FixedSizePool::SlabsForTesting() const {
  ReaderLock lock(mu_);
  return slabs_.size();
}

}  // namespace graphgc
