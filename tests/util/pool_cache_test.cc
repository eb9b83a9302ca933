#include "util/pool_cache.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "absl/base/config.h"
#include "gtest/gtest.h"
#include "util/fixed_size_pool.h"

#ifdef ABSL_HAVE_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#endif

namespace graphgc {
namespace {

// Each test has a pool (and so a cache type, with its own stashes) of its
// own: stashes are per thread and per pool, and outlive a test.
template <int kTest>
FixedSizePool& TestPool() {
  static FixedSizePool* const pool = new FixedSizePool(64);
  return *pool;
}
template <int kTest>
using Cache = PoolCache<TestPool<kTest>>;

TEST(PoolCache, AnEmptyStashTakesABatchFromThePool) {
  using C = Cache<1>;
  EXPECT_EQ(C::CountForTesting(), 0u);
  void* a = C::Allocate();
  EXPECT_NE(a, nullptr);
  EXPECT_EQ(C::CountForTesting(), C::kBatch - 1);
  C::Free(a);
  EXPECT_EQ(C::CountForTesting(), C::kBatch);
}

TEST(PoolCache, AFreedBlockIsTheThreadsNextAllocation) {
  using C = Cache<2>;
  void* a = C::Allocate();
  void* b = C::Allocate();
  C::Free(a);
  EXPECT_EQ(C::Allocate(), a);
  C::Free(b);
  C::Free(a);
  EXPECT_EQ(C::Allocate(), a);
  EXPECT_EQ(C::Allocate(), b);
  C::Free(a);
  C::Free(b);
  C::Free(nullptr);  // nothing
}

TEST(PoolCache, BlocksNeverOverlapAndKeepWhatIsWritten) {
  using C = Cache<3>;
  const size_t size = TestPool<3>().block_size();
  std::vector<char*> blocks;
  for (int i = 0; i < 1000; ++i) {
    blocks.push_back(static_cast<char*>(C::Allocate()));
    std::memset(blocks.back(), i & 0xff, size);
  }
  std::set<char*> sorted(blocks.begin(), blocks.end());
  ASSERT_EQ(sorted.size(), blocks.size());
  char* previous_end = nullptr;
  for (char* block : sorted) {
    EXPECT_GE(block, previous_end);
    previous_end = block + size;
  }
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(blocks[i][0], static_cast<char>(i & 0xff));
    EXPECT_EQ(blocks[i][size - 1], static_cast<char>(i & 0xff));
  }
  for (char* block : blocks) C::Free(block);
}

// Postcondition 3: a full stash hands its oldest half back and keeps the
// most recently freed.
TEST(PoolCache, AFullStashHandsItsOldestBatchBack) {
  using C = Cache<4>;
  // Taken from the pool itself, so that the stash starts empty.
  std::vector<void*> blocks;
  for (uint32_t i = 0; i < C::kCapacity + 1; ++i) {
    blocks.push_back(TestPool<4>().Allocate());
  }
  ASSERT_EQ(C::CountForTesting(), 0u);
  for (uint32_t i = 0; i < C::kCapacity; ++i) C::Free(blocks[i]);
  EXPECT_EQ(C::CountForTesting(), C::kCapacity);
  C::Free(blocks[C::kCapacity]);
  EXPECT_EQ(C::CountForTesting(), C::kCapacity - C::kBatch + 1);
  // Newest first: the last freed, then back to the first kept.
  EXPECT_EQ(C::Allocate(), blocks[C::kCapacity]);
  EXPECT_EQ(C::Allocate(), blocks[C::kCapacity - 1]);
  // The handed-back ones are the pool's again: its next blocks.
  void* from_pool = TestPool<4>().Allocate();
  bool handed_back = false;
  for (uint32_t i = 0; i < C::kBatch; ++i) {
    handed_back |= from_pool == blocks[i];
  }
  EXPECT_TRUE(handed_back);
  TestPool<4>().Free(from_pool);
  C::Free(blocks[C::kCapacity]);
  C::Free(blocks[C::kCapacity - 1]);
}

// Postcondition 4: a thread's stash goes back to the pool when it exits,
// so threads that come and go do not grow the pool.
TEST(PoolCache, AnExitingThreadsStashGoesBackToThePool) {
  using C = Cache<5>;
  std::thread([] { C::Free(C::Allocate()); }).join();
  const size_t slabs = TestPool<5>().SlabsForTesting();
  const size_t per_slab = TestPool<5>().blocks_per_segment();
  for (int round = 0; round < 20; ++round) {
    std::thread([per_slab] {
      std::vector<void*> mine;
      for (size_t i = 0; i < per_slab / 2; ++i) mine.push_back(C::Allocate());
      for (void* block : mine) C::Free(block);
      EXPECT_GT(C::CountForTesting(), 0u);
    }).join();
  }
  EXPECT_EQ(TestPool<5>().SlabsForTesting(), slabs);
  // Its blocks are free in the pool: a whole slab's worth fits without a
  // new one.
  std::vector<void*> blocks;
  for (size_t i = 0; i < per_slab; ++i) {
    blocks.push_back(TestPool<5>().Allocate());
  }
  EXPECT_EQ(TestPool<5>().SlabsForTesting(), slabs);
  for (void* block : blocks) TestPool<5>().Free(block);
}

// A block allocated on one thread may be freed on another.
TEST(PoolCache, ManyThreadsAllocateAndFreeAtOnce) {
  using C = Cache<6>;
  const size_t size = TestPool<6>().block_size();
  constexpr int kThreads = 4;
  std::vector<std::vector<char*>> made(kThreads);
  std::vector<std::thread> threads;
  std::vector<int> bad(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 50; ++r) {
        std::vector<char*> mine;
        for (int i = 0; i < 100; ++i) {
          mine.push_back(static_cast<char*>(C::Allocate()));
          std::memset(mine.back(), 'a' + t, size);
        }
        for (char* block : mine) {
          for (size_t k = 0; k < size; ++k) bad[t] += block[k] != 'a' + t;
        }
        // Half freed here, half kept for the main thread to free.
        for (int i = 0; i < 50; ++i) C::Free(mine[i]);
        made[t].insert(made[t].end(), mine.begin() + 50, mine.end());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(bad[t], 0) << "thread " << t;
    for (char* block : made[t]) C::Free(block);
  }
}

TEST(PoolCache, AStashedBlockIsPoisonedUnderAddressSanitizer) {
#ifdef ABSL_HAVE_ADDRESS_SANITIZER
  using C = Cache<7>;
  char* a = static_cast<char*>(C::Allocate());
  EXPECT_FALSE(__asan_address_is_poisoned(a));
  C::Free(a);
  EXPECT_TRUE(__asan_address_is_poisoned(a));
  EXPECT_TRUE(__asan_address_is_poisoned(a + TestPool<7>().block_size() - 1));
  EXPECT_EQ(C::Allocate(), a);
  EXPECT_FALSE(__asan_address_is_poisoned(a + TestPool<7>().block_size() - 1));
  C::Free(a);
#else
  GTEST_SKIP() << "checked in the AddressSanitizer build";
#endif
}

}  // namespace
}  // namespace graphgc
