// util/fixed_size_pool.h
//
// FixedSizePool: memory blocks of one size, carved from slabs and
// recycled through a free list, for a type's class-level operator new and
// delete. A graph makes and frees millions of equal-sized nodes
// (runtime/node.h); through glibc's malloc each one was a search of its
// bins, and a graph built after a big one was dropped paid a page fault
// per 4 KiB again, as free() had handed the memory back (`perf record -g`
// of `gc_bench --benchmark_filter='BM_PeerGraphgcCollect/1/'`: 15% of
// samples in _int_malloc, 16% in page faults).
//
// Postconditions:
//  1. Allocate() returns a block of block_size() bytes, aligned to
//     alignof(std::max_align_t), that overlaps no other block allocated and
//     not yet freed. It throws std::bad_alloc when the system has no memory
//     left, as operator new does.
//  2. Free(p) of a block this pool's Allocate() returned makes it available
//     to a later Allocate() (the most recently freed first).
//  3. Slabs are never handed back: the pool holds the most blocks ever
//     live at once, rounded up to a slab, and reuses them (as Boehm GC keeps
//     its heap). Blocks still allocated when the process exits are not
//     leaks to LeakSanitizer: the slabs stay reachable.
//  4. Slabs are kSlabBytes (64 KiB) until the pool holds kHugePageBytes
//     (2 MiB) of them; after that each new slab is kHugePageBytes from
//     AllocateLarge (util/huge_pages.h), so a big graph's nodes sit in huge
//     pages (a fault per 2 MiB, not per 4 KiB) while a small one takes
//     memory 64 KiB at a time.
//  5. Under AddressSanitizer a free block is poisoned: reading or writing
//     it before Allocate() hands it out again is reported like a use after
//     delete.
//
// Thread-safe: Allocate and Free may be called from any threads at once.
#ifndef GRAPHGC_UTIL_FIXED_SIZE_POOL_H_
#define GRAPHGC_UTIL_FIXED_SIZE_POOL_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "util/huge_pages.h"
#include "util/mutex.h"

namespace graphgc {

class FixedSizePool {
 public:
  static constexpr size_t kSlabBytes = size_t{64} << 10;

  // Blocks of `size` bytes rounded up to alignof(std::max_align_t). Throws
  // std::length_error unless 0 < size <= kSlabBytes.
  explicit FixedSizePool(size_t size);
  FixedSizePool(const FixedSizePool&) = delete;
  FixedSizePool& operator=(const FixedSizePool&) = delete;
  ~FixedSizePool() = default;

  size_t block_size() const { return block_size_; }

  void* Allocate() ABSL_LOCKS_EXCLUDED(mu_);
  void Free(void* block) ABSL_LOCKS_EXCLUDED(mu_);

  // Slabs taken from the system so far, and their bytes (for tests).
  size_t SlabsForTesting() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t SlabBytesForTesting() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // A free block's first bytes: the next free block.
  struct FreeBlock {
    FreeBlock* next;
  };

  const size_t block_size_;
  mutable ExclusiveMutex mu_;
  FreeBlock* free_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Never-used blocks of the newest slab: [next_, end_).
  char* next_ ABSL_GUARDED_BY(mu_) = nullptr;
  char* end_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::vector<LargeBlock> slabs_ ABSL_GUARDED_BY(mu_);
  size_t slab_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // in all of slabs_
};

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_FIXED_SIZE_POOL_H_
