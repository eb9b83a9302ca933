// util/fixed_size_pool.h
//
// FixedSizePool: memory blocks of one size, carved from slabs and
// recycled, for a type's class-level operator new and delete. A graph
// makes and frees millions of equal-sized nodes (runtime/node.h); through
// glibc's malloc each one is a search of its bins, and a graph built after
// a big one was dropped pays a page fault per 4 KiB again, as free() hands
// the memory back.
//
// Slabs are split into kSlabBytes-aligned 64 KiB segments, each with a
// header holding a bitmap of its free blocks. Allocate() takes the lowest
// free block of one segment until it has none, then turns to another
// segment with free blocks, and only then to new memory. Not one free list
// for the whole pool: after a few graphs are built and swept in random
// order, a list hands consecutive nodes from anywhere in the pool, a cache
// miss for each, and it is read one block at a time, each read waiting for
// the one before, where a bitmap hands out 64 blocks from one word. Free()
// writes nothing into the block.
//
// Postconditions:
//  1. Allocate() returns a block of block_size() bytes, aligned to
//     alignof(std::max_align_t), that overlaps no other block allocated and
//     not yet freed. It throws std::bad_alloc when the system has no memory
//     left, as operator new does.
//  2. Free(p) of a block this pool's Allocate() returned makes it available
//     to a later Allocate(). Allocate() hands out the lowest free block of
//     the segment it last allocated from while that has any, then those of
//     the segment that most recently gained a free block, and takes a new
//     segment only when no segment has a free block.
//  3. Slabs are never handed back: the pool holds the most blocks ever
//     live at once, rounded up to a slab, and reuses them (as Boehm GC keeps
//     its heap). Blocks still allocated when the process exits are not
//     leaks to LeakSanitizer: the slabs stay reachable.
//  4. Slabs are kSlabBytes (64 KiB) until the pool holds kHugePageBytes
//     (2 MiB) of them; after that each new slab is kHugePageBytes from
//     AllocateLarge (util/huge_pages.h), so a big graph's nodes sit in huge
//     pages (a fault per 2 MiB, not per 4 KiB) while a small one takes
//     memory 64 KiB at a time. Every slab starts on a multiple of its size.
//  5. Each segment holds blocks_per_segment() blocks after a header of
//     header_bytes(): block sizes are 1 to kMaxBlockBytes.
//  6. Under AddressSanitizer a free block is poisoned: reading or writing
//     it before Allocate() hands it out again is reported like a use after
//     delete.
//
// Thread-safe: Allocate and Free may be called from any threads at once.
#ifndef GRAPHGC_UTIL_FIXED_SIZE_POOL_H_
#define GRAPHGC_UTIL_FIXED_SIZE_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "util/huge_pages.h"
#include "util/mutex.h"

namespace graphgc {

class FixedSizePool {
 public:
  static constexpr size_t kSlabBytes = size_t{64} << 10;
  // The smallest header (one bitmap word): the most a block can take.
  static constexpr size_t kMinHeaderBytes = 32;
  static constexpr size_t kMaxBlockBytes = kSlabBytes - kMinHeaderBytes;

  // Blocks of `size` bytes rounded up to alignof(std::max_align_t). Throws
  // std::length_error unless 0 < size <= kMaxBlockBytes.
  explicit FixedSizePool(size_t size);
  FixedSizePool(const FixedSizePool&) = delete;
  FixedSizePool& operator=(const FixedSizePool&) = delete;
  ~FixedSizePool() = default;

  size_t block_size() const { return block_size_; }
  size_t blocks_per_segment() const { return blocks_per_segment_; }
  size_t header_bytes() const { return header_bytes_; }

  void* Allocate() ABSL_LOCKS_EXCLUDED(mu_);
  void Free(void* block) ABSL_LOCKS_EXCLUDED(mu_);
  // Up to n blocks, as n Allocate() calls would give them, under one lock
  // (util/pool_cache.h): returns how many are in out[0, k), k >= 1 when
  // n >= 1. Throws std::bad_alloc only when it got none.
  size_t AllocateBatch(void** out, size_t n) ABSL_LOCKS_EXCLUDED(mu_);
  // Free(blocks[i]) for each i < n (none null), under one lock.
  void FreeBatch(void* const* blocks, size_t n) ABSL_LOCKS_EXCLUDED(mu_);

  // Slabs taken from the system so far, and their bytes (for tests).
  size_t SlabsForTesting() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t SlabBytesForTesting() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The header at the start of each kSlabBytes-aligned segment, followed
  // by a bitmap of ceil(blocks_per_segment_ / 64) words: bit i set when
  // block i is free.
  struct Segment {
    Segment* next_open = nullptr;  // in open_, when `open`
    uint32_t free = 0;             // blocks free: bits set
    uint32_t hint = 0;             // no bit is set in the words below it
    bool open = false;  // in open_: has free blocks and is not current_
  };
  static_assert(sizeof(Segment) + sizeof(uint64_t) <= kMinHeaderBytes);
  // A small slab: aligned_alloc's, freed with free().
  struct FreeSmallSlab {
    void operator()(char* slab) const noexcept;
  };
  using SmallSlab = std::unique_ptr<char[], FreeSmallSlab>;

  static Segment* SegmentOf(void* block);
  static uint64_t* BitsOf(Segment* segment);
  char* FirstBlockOf(Segment* segment) const;
  // Makes current_ a segment with a free block: the next open one, else a
  // new one (and a new slab when the last is used up). Changes nothing
  // when it throws.
  void NextSegment() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddSlab() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void* AllocateLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FreeLocked(void* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t block_size_;
  size_t header_bytes_ = 0;  // the Segment and ceil(blocks / 64) words
  size_t blocks_per_segment_ = 0;
  mutable ExclusiveMutex mu_;
  // The segment Allocate takes blocks from (nullptr: none yet).
  Segment* current_ ABSL_GUARDED_BY(mu_) = nullptr;
  // The other segments with free blocks, the one that gained a free block
  // last first.
  Segment* open_ ABSL_GUARDED_BY(mu_) = nullptr;
  // The newest slab's segments not used yet: [next_segment_, slab_end_).
  char* next_segment_ ABSL_GUARDED_BY(mu_) = nullptr;
  char* slab_end_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::vector<SmallSlab> small_slabs_ ABSL_GUARDED_BY(mu_);
  std::vector<LargeBlock> huge_slabs_ ABSL_GUARDED_BY(mu_);
  size_t slab_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // in all slabs
};

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_FIXED_SIZE_POOL_H_
