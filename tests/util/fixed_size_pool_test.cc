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
  EXPECT_THROW(FixedSizePool{FixedSizePool::kSlabBytes + 1}, std::length_error);
  // Would wrap to a small block when rounded up.
  EXPECT_THROW(FixedSizePool{std::numeric_limits<size_t>::max()},
               std::length_error);
  EXPECT_EQ(FixedSizePool(FixedSizePool::kSlabBytes).block_size(),
            FixedSizePool::kSlabBytes);
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
  EXPECT_EQ(pool.Allocate(), a);  // the most recently freed first
  EXPECT_EQ(pool.Allocate(), b);
  pool.Free(a);
  pool.Free(b);
}

TEST(FixedSizePool, MemoryIsReusedRatherThanGrown) {
  FixedSizePool pool(128);
  const size_t per_slab = FixedSizePool::kSlabBytes / pool.block_size();
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
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kHugePageBytes, 0u);
  EXPECT_EQ(pool.SlabBytesForTesting(), 2 * kHugePageBytes);
  // It holds a huge page of blocks before the next slab.
  for (size_t i = 1; i < kHugePageBytes / pool.block_size(); ++i) {
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
