#include "util/fixed_size_pool.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "absl/base/config.h"
#include "gtest/gtest.h"
#include "util/huge_pages.h"

#ifdef ABSL_HAVE_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#endif

namespace graphgc {
namespace {

TEST(FixedSizePool, BlockSizeIsRoundedUpToTheFundamentalAlignment) {
  EXPECT_EQ(FixedSizePool(1).block_size(), alignof(std::max_align_t));
  EXPECT_EQ(FixedSizePool(144).block_size() % alignof(std::max_align_t), 0u);
  EXPECT_GE(FixedSizePool(145).block_size(), 145u);
}

TEST(FixedSizePool, ABlockSizeOutsideOneToASlabIsRefused) {
  EXPECT_THROW(FixedSizePool{0}, std::length_error);
  EXPECT_THROW(FixedSizePool{FixedSizePool::kMaxBlockBytes + 1},
               std::length_error);
  // Would wrap to a small block when rounded up.
  EXPECT_THROW(FixedSizePool{std::numeric_limits<size_t>::max()},
               std::length_error);
  EXPECT_EQ(FixedSizePool(FixedSizePool::kMaxBlockBytes).block_size(),
            FixedSizePool::kMaxBlockBytes);
}

TEST(FixedSizePool, TheLargestBlocksFitOnePerSegment) {
  FixedSizePool pool(FixedSizePool::kMaxBlockBytes);
  EXPECT_EQ(pool.blocks_per_segment(), 1u);
  std::vector<char*> blocks;
  for (int i = 0; i < 3; ++i) {
    blocks.push_back(static_cast<char*>(pool.Allocate()));
    std::memset(blocks.back(), i, pool.block_size());
  }
  EXPECT_EQ(pool.SlabsForTesting(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(blocks[i][0], static_cast<char>(i));
    EXPECT_EQ(blocks[i][pool.block_size() - 1], static_cast<char>(i));
    pool.Free(blocks[i]);
  }
}

TEST(FixedSizePool, BlocksAreAlignedAndNeverOverlap) {
  FixedSizePool pool(40);
  std::vector<char*> blocks;
  // Enough to span several slabs.
  const size_t n = 3 * FixedSizePool::kSlabBytes / pool.block_size() + 7;
  for (size_t i = 0; i < n; ++i) {
    char* block = static_cast<char*>(pool.Allocate());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % alignof(std::max_align_t),
              0u);
    std::memset(block, static_cast<int>(i & 0xff), pool.block_size());
    blocks.push_back(block);
  }
  std::set<char*> sorted(blocks.begin(), blocks.end());
  ASSERT_EQ(sorted.size(), n);
  char* previous_end = nullptr;
  for (char* block : sorted) {
    EXPECT_GE(block, previous_end);
    previous_end = block + pool.block_size();
  }
  // Each block still holds what was written into it.
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(blocks[i][pool.block_size() - 1], static_cast<char>(i & 0xff));
  }
  EXPECT_GE(pool.SlabsForTesting(), 4u);
  for (char* block : blocks) pool.Free(block);
}

TEST(FixedSizePool, AFreedBlockIsHandedOutAgainBeforeNewMemory) {
  FixedSizePool pool(64);
  void* a = pool.Allocate();
  void* b = pool.Allocate();
  pool.Free(a);
  EXPECT_EQ(pool.Allocate(), a);
  pool.Free(b);
  pool.Free(a);
  EXPECT_EQ(pool.Allocate(), a);  // the lowest first
  EXPECT_EQ(pool.Allocate(), b);
  pool.Free(a);
  pool.Free(b);
}

// Postcondition 2: freed blocks come back one segment at a time, the
// lowest first, not in the order they were freed.
TEST(FixedSizePool, FreedBlocksAreHandedOutASegmentAtATimeLowestFirst) {
  FixedSizePool pool(128);
  const size_t per_segment = pool.blocks_per_segment();
  std::vector<char*> blocks;
  for (size_t i = 0; i < 3 * per_segment; ++i) {
    blocks.push_back(static_cast<char*>(pool.Allocate()));
  }
  // Freed alternating between the first and the third segment, each from
  // its end down.
  for (size_t i = per_segment; i-- > 0;) {
    pool.Free(blocks[i]);
    pool.Free(blocks[2 * per_segment + i]);
  }
  // The third segment gained a free block last: all of its blocks first,
  // lowest first, then all of the first segment's.
  for (size_t i = 0; i < per_segment; ++i) {
    EXPECT_EQ(pool.Allocate(), blocks[2 * per_segment + i]);
  }
  for (size_t i = 0; i < per_segment; ++i) {
    EXPECT_EQ(pool.Allocate(), blocks[i]);
  }
  // A block freed into a segment that ran out comes back next.
  pool.Free(blocks[per_segment]);
  EXPECT_EQ(pool.Allocate(), blocks[per_segment]);
  // A block freed into the segment being allocated from comes back before
  // its higher blocks.
  pool.Free(blocks[per_segment + 1]);
  pool.Free(blocks[per_segment + 5]);
  pool.Free(blocks[per_segment + 3]);
  EXPECT_EQ(pool.Allocate(), blocks[per_segment + 1]);
  EXPECT_EQ(pool.Allocate(), blocks[per_segment + 3]);
  EXPECT_EQ(pool.Allocate(), blocks[per_segment + 5]);
  for (char* block : blocks) pool.Free(block);
  EXPECT_EQ(pool.SlabsForTesting(), 3u);
}

// Postcondition 5: the header is as small as the bitmap allows, and the
// blocks fill the rest of the segment.
TEST(FixedSizePool, ASegmentsHeaderCoversItsBlocks) {
  for (size_t size : {1, 16, 48, 144, 1000, 4096, 30000}) {
    FixedSizePool pool(size);
    const size_t blocks = pool.blocks_per_segment();
    EXPECT_LE(pool.header_bytes() + blocks * pool.block_size(),
              FixedSizePool::kSlabBytes)
        << size;
    EXPECT_GT(pool.header_bytes() + (blocks + 1) * pool.block_size(),
              FixedSizePool::kSlabBytes - 64)
        << size;
    // Every block of a segment is handed out before the next segment.
    std::vector<void*> taken;
    for (size_t i = 0; i < blocks; ++i) taken.push_back(pool.Allocate());
    EXPECT_EQ(pool.SlabsForTesting(), 1u) << size;
    taken.push_back(pool.Allocate());
    EXPECT_EQ(pool.SlabsForTesting(), 2u) << size;
    for (void* block : taken) pool.Free(block);
  }
}

TEST(FixedSizePool, MemoryIsReusedRatherThanGrown) {
  FixedSizePool pool(128);
  const size_t per_slab = pool.blocks_per_segment();
  for (int round = 0; round < 10; ++round) {
    std::vector<void*> blocks;
    for (size_t i = 0; i < 2 * per_slab; ++i) blocks.push_back(pool.Allocate());
    for (void* block : blocks) pool.Free(block);
  }
  EXPECT_EQ(pool.SlabsForTesting(), 2u);
}

// Postcondition 4: a pool that holds 2 MiB takes its further slabs 2 MiB
// at a time, each starting on a huge page.
TEST(FixedSizePool, APoolHoldingAHugePageGrowsAHugePageAtATime) {
  FixedSizePool pool(256);
  std::vector<void*> blocks;
  // Small slabs up to a huge page's worth.
  while (pool.SlabBytesForTesting() < kHugePageBytes) {
    blocks.push_back(pool.Allocate());
  }
  EXPECT_EQ(pool.SlabsForTesting(), kHugePageBytes / FixedSizePool::kSlabBytes);
  // The blocks left in the last small slab, then the first huge one.
  const size_t slabs = pool.SlabsForTesting();
  void* first = nullptr;
  while (first == nullptr) {
    void* block = pool.Allocate();
    blocks.push_back(block);
    if (pool.SlabsForTesting() > slabs) first = block;
  }
  // The slab starts on a huge page; its first segment's header, then the
  // block.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kHugePageBytes,
            pool.header_bytes());
  EXPECT_EQ(pool.SlabBytesForTesting(), 2 * kHugePageBytes);
  // It holds a huge page of blocks, segment by segment, before the next
  // slab.
  const size_t per_huge_page =
      kHugePageBytes / FixedSizePool::kSlabBytes * pool.blocks_per_segment();
  for (size_t i = 1; i < per_huge_page; ++i) {
    blocks.push_back(pool.Allocate());
  }
  EXPECT_EQ(pool.SlabsForTesting(), slabs + 1);
  blocks.push_back(pool.Allocate());
  EXPECT_EQ(pool.SlabsForTesting(), slabs + 2);
  EXPECT_EQ(pool.SlabBytesForTesting(), 3 * kHugePageBytes);
  for (void* block : blocks) pool.Free(block);
}

// A use of a block after Free is reported as a use after delete would be.
TEST(FixedSizePool, AFreeBlockIsPoisonedUnderAddressSanitizer) {
#ifdef ABSL_HAVE_ADDRESS_SANITIZER
  FixedSizePool pool(64);
  char* a = static_cast<char*>(pool.Allocate());
  char* b = static_cast<char*>(pool.Allocate());
  EXPECT_FALSE(__asan_address_is_poisoned(a));
  EXPECT_FALSE(__asan_address_is_poisoned(a + pool.block_size() - 1));
  pool.Free(a);
  EXPECT_TRUE(__asan_address_is_poisoned(a));
  EXPECT_TRUE(__asan_address_is_poisoned(a + pool.block_size() - 1));
  // Not yet handed out: the rest of the slab.
  EXPECT_TRUE(__asan_address_is_poisoned(b + pool.block_size()));
  EXPECT_EQ(pool.Allocate(), a);
  EXPECT_FALSE(__asan_address_is_poisoned(a + pool.block_size() - 1));
  pool.Free(a);
  pool.Free(b);
#else
  GTEST_SKIP() << "checked in the AddressSanitizer build";
#endif
}

// A second Free of a free block (a bug in the caller) is not counted: the
// pool never hands one block out twice.
TEST(FixedSizePool, ASecondFreeOfAFreeBlockChangesNothing) {
  FixedSizePool pool(64);
  const size_t n = pool.blocks_per_segment();
  std::vector<void*> blocks;
  for (size_t i = 0; i < n; ++i) blocks.push_back(pool.Allocate());
  pool.Free(blocks[3]);
  pool.Free(blocks[3]);
  EXPECT_EQ(pool.Allocate(), blocks[3]);
  // The segment is full again: the next block is a new segment's.
  void* next = pool.Allocate();
  EXPECT_EQ(pool.SlabsForTesting(), 2u);
  std::set<void*> distinct(blocks.begin(), blocks.end());
  EXPECT_EQ(distinct.count(next), 0u);
  pool.Free(next);
  for (void* block : blocks) pool.Free(block);
}

TEST(FixedSizePool, FreeOfNullDoesNothing) {
  FixedSizePool pool(16);
  pool.Free(nullptr);
  void* a = pool.Allocate();
  EXPECT_NE(a, nullptr);
  pool.Free(a);
}

// Under TSan a missing lock shows as a race; without it, as blocks handed
// to two threads at once (each thread checks its blocks keep its marks).
TEST(FixedSizePool, ManyThreadsAllocateAndFreeAtOnce) {
  FixedSizePool pool(48);
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  constexpr int kBlocks = 100;
  std::vector<std::thread> threads;
  std::vector<int> bad(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&pool, &bad, t] {
      for (int r = 0; r < kRounds; ++r) {
        std::vector<char*> mine;
        for (int i = 0; i < kBlocks; ++i) {
          char* block = static_cast<char*>(pool.Allocate());
          std::memset(block, 'a' + t, pool.block_size());
          mine.push_back(block);
        }
        for (char* block : mine) {
          for (size_t k = 0; k < pool.block_size(); ++k) {
            if (block[k] != 'a' + t) ++bad[t];
          }
          pool.Free(block);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace graphgc
