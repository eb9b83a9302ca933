#include "util/fixed_size_pool.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
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
  // by zero below, and one past a segment would run off its end.
  if (size == 0 || size > kMaxBlockBytes) {
    throw std::length_error("FixedSizePool: block size " +
                            std::to_string(size) + " is not in [1, " +
                            std::to_string(kMaxBlockBytes) + "]");
  }
  // The fewest bitmap words that cover the blocks fitting after them.
  for (size_t words = 1;; ++words) {
    header_bytes_ = RoundUpToAlign(sizeof(Segment) + words * sizeof(uint64_t));
    blocks_per_segment_ = (kSlabBytes - header_bytes_) / block_size_;
    if ((blocks_per_segment_ + 63) / 64 <= words) break;
  }
}

void FixedSizePool::FreeSmallSlab::operator()(char* slab) const noexcept {
  std::free(slab);
}

FixedSizePool::Segment* FixedSizePool::SegmentOf(void* block) {
  return reinterpret_cast<Segment*>(reinterpret_cast<uintptr_t>(block) &
                                    ~uintptr_t{kSlabBytes - 1});
}

uint64_t* FixedSizePool::BitsOf(Segment* segment) {
  return reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(segment) +
                                     sizeof(Segment));
}

char* FixedSizePool::FirstBlockOf(Segment* segment) const {
  return reinterpret_cast<char*>(segment) + header_bytes_;
}

void FixedSizePool::AddSlab() {
  const size_t bytes =
      slab_bytes_ >= kHugePageBytes ? kHugePageBytes : kSlabBytes;
  char* slab;
  // Each kept before it is used, so a failed push_back leaves nothing
  // behind.
  if (bytes == kHugePageBytes) {
    LargeBlock block = AllocateLargeBlock(bytes);  // on a huge page
    slab = block.get();
    huge_slabs_.push_back(std::move(block));
  } else {
    void* p = std::aligned_alloc(kSlabBytes, kSlabBytes);
    if (p == nullptr) throw std::bad_alloc();
    SmallSlab block(static_cast<char*>(p));
    slab = block.get();
    small_slabs_.push_back(std::move(block));
  }
  slab_bytes_ += bytes;
  next_segment_ = slab;
  slab_end_ = slab + bytes;
  ASAN_POISON_MEMORY_REGION(slab, bytes);
}

void FixedSizePool::NextSegment() {
  if (open_ != nullptr) {
    current_ = open_;
    open_ = current_->next_open;
    current_->next_open = nullptr;
    current_->open = false;
    return;
  }
  if (next_segment_ == slab_end_) AddSlab();
  char* memory = next_segment_;
  next_segment_ += kSlabBytes;
  ASAN_UNPOISON_MEMORY_REGION(memory, header_bytes_);
  Segment* segment = new (memory) Segment();
  // Every block free: full words, then the last one's low bits.
  uint64_t* bits = BitsOf(segment);
  const size_t full_words = blocks_per_segment_ / 64;
  std::fill_n(bits, full_words, ~uint64_t{0});
  if (const size_t left = blocks_per_segment_ % 64; left != 0) {
    bits[full_words] = (uint64_t{1} << left) - 1;
  }
  segment->free = static_cast<uint32_t>(blocks_per_segment_);
  current_ = segment;
}

void* FixedSizePool::Allocate() {
  ExclusiveLock lock(mu_);
  return AllocateLocked();
}

size_t FixedSizePool::AllocateBatch(void** out, size_t n) {
  ExclusiveLock lock(mu_);
  size_t i = 0;
  try {
    for (; i < n; ++i) out[i] = AllocateLocked();
  } catch (const std::bad_alloc&) {
    if (i == 0) throw;
  }
  return i;
}

void FixedSizePool::Free(void* block) {
  if (block == nullptr) return;
  ExclusiveLock lock(mu_);
  FreeLocked(block);
}

void FixedSizePool::FreeBatch(void* const* blocks, size_t n) {
  if (n == 0) return;
  ExclusiveLock lock(mu_);
  for (size_t i = 0; i < n; ++i) FreeLocked(blocks[i]);
}

void* FixedSizePool::AllocateLocked() {
  if (current_ == nullptr || current_->free == 0) NextSegment();
  Segment* segment = current_;
  uint64_t* bits = BitsOf(segment);
  // segment->free > 0: a set bit lies at or after the hint.
  uint32_t w = segment->hint;
  while (bits[w] == 0) ++w;
  const int bit = std::countr_zero(bits[w]);
  bits[w] &= bits[w] - 1;
  segment->hint = w;
  --segment->free;
  char* block = FirstBlockOf(segment) +
                (size_t{w} * 64 + static_cast<size_t>(bit)) * block_size_;
  ASAN_UNPOISON_MEMORY_REGION(block, block_size_);
  return block;
}

void FixedSizePool::FreeLocked(void* block) {
  Segment* segment = SegmentOf(block);
  const size_t index =
      static_cast<size_t>(static_cast<char*>(block) - FirstBlockOf(segment)) /
      block_size_;
  const uint32_t w = static_cast<uint32_t>(index / 64);
  uint64_t& word = BitsOf(segment)[w];
  const uint64_t bit = uint64_t{1} << (index % 64);
  // A block freed twice is a bug in the caller; counting it twice would
  // let Allocate read past the bitmap. The second Free changes nothing.
  if ((word & bit) != 0) return;
  word |= bit;
  if (w < segment->hint) segment->hint = w;
  ++segment->free;
  ASAN_POISON_MEMORY_REGION(block, block_size_);
  if (segment != current_ && !segment->open) {
    segment->open = true;
    segment->next_open = open_;
    open_ = segment;
  }
}

size_t FixedSizePool::SlabsForTesting() const {
  ExclusiveLock lock(mu_);
  return small_slabs_.size() + huge_slabs_.size();
}

size_t FixedSizePool::SlabBytesForTesting() const {
  ExclusiveLock lock(mu_);
  return slab_bytes_;
}

}  // namespace graphgc
