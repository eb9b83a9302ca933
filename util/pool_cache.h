// util/pool_cache.h
//
// PoolCache<Pool>: each thread's own stash of the blocks of one
// FixedSizePool (the one `Pool()` returns), so that most Allocate and Free
// calls take no lock. Without it a node made under the graph's lock would
// take the pool's mutex too, a lock, an unlock and a shared Allocate for
// every node of a graph being built.
//
// Postconditions:
//  1. Allocate() returns a block of Pool().block_size() bytes that overlaps
//     no other block allocated and not yet freed, as Pool().Allocate()
//     does (and throws std::bad_alloc as it does). It takes no lock when
//     the calling thread's stash holds a block.
//  2. Free(p) of a block from Allocate() (on any thread) or from
//     Pool().Allocate() keeps it in the calling thread's stash, where that
//     thread's next Allocate() takes it first; Free(nullptr) does nothing.
//  3. A stash holds at most kCapacity blocks: an empty one takes kBatch
//     blocks from the pool under one lock, and a full one hands its
//     kBatch oldest back under one lock.
//  4. When a thread exits, its stash goes back to the pool; Allocate and
//     Free called on that thread after its thread_local objects were
//     destroyed (a node freed by a static destructor on the main thread)
//     go to the pool directly.
//  5. Under AddressSanitizer a block in a stash is poisoned, as a free
//     block in the pool is.
//
// Thread-safe: every thread has its own stash; the pool is thread-safe.
#ifndef GRAPHGC_UTIL_POOL_CACHE_H_
#define GRAPHGC_UTIL_POOL_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

// Its ASAN_(UN)POISON_MEMORY_REGION do nothing outside AddressSanitizer
// builds.
#include <sanitizer/asan_interface.h>

#include "util/fixed_size_pool.h"

namespace graphgc {

template <FixedSizePool& (*Pool)()>
class PoolCache {
 public:
  static constexpr uint32_t kCapacity = 64;
  static constexpr uint32_t kBatch = 32;

  PoolCache() = delete;

  static void* Allocate() {
    FixedSizePool& pool = Pool();
    State& s = state_;
    if (s.count == 0) {
      if (s.retired) return pool.Allocate();
      MakeFlusher(s);
      s.count = static_cast<uint32_t>(pool.AllocateBatch(s.blocks, kBatch));
      for (uint32_t i = 0; i < s.count; ++i) Poison(pool, s.blocks[i]);
    }
    void* block = s.blocks[--s.count];
    ASAN_UNPOISON_MEMORY_REGION(block, pool.block_size());
    // The next block is written by the next Allocate()'s caller: its
    // lines are fetched now, while this one's caller works.
    if (s.count > 0) Prefetch(pool, s.blocks[s.count - 1]);
    return block;
  }

  static void Free(void* block) {
    if (block == nullptr) return;
    FixedSizePool& pool = Pool();
    State& s = state_;
    if (s.retired) {
      pool.Free(block);
      return;
    }
    MakeFlusher(s);
    if (s.count == kCapacity) {
      // The oldest go back; the most recently freed stay.
      pool.FreeBatch(s.blocks, kBatch);
      std::memmove(s.blocks, s.blocks + kBatch,
                   (kCapacity - kBatch) * sizeof(void*));
      s.count -= kBatch;
    }
    Poison(pool, block);
    s.blocks[s.count++] = block;
  }

  // Blocks in the calling thread's stash (for tests).
  static uint32_t CountForTesting() { return state_.count; }

 private:
  struct State {
    void* blocks[kCapacity];
    uint32_t count;
    bool flusher_made;  // this thread's Flusher exists
    bool retired;       // ... and has been destroyed
  };
  // Destroyed with the thread's other thread_local objects: hands the
  // stash back and retires it (postcondition 4).
  struct Flusher {
    ~Flusher() {
      State& s = state_;
      Pool().FreeBatch(s.blocks, s.count);
      s.count = 0;
      s.retired = true;
    }
  };

  static void MakeFlusher(State& s) {
    if (s.flusher_made) return;
    thread_local Flusher flusher;
    (void)flusher;
    s.flusher_made = true;
  }
  static void Prefetch(const FixedSizePool& pool, const void* block) {
    const char* p = static_cast<const char*>(block);
    for (size_t at = 0; at < pool.block_size(); at += 64) {
      __builtin_prefetch(p + at, /*rw=*/1, /*locality=*/3);
    }
  }
  static void Poison([[maybe_unused]] const FixedSizePool& pool,
                     [[maybe_unused]] void* block) {
    ASAN_POISON_MEMORY_REGION(block, pool.block_size());
  }

  // Trivially destructible, so still readable after the Flusher is gone.
  static inline thread_local constinit State state_{};
};

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_POOL_CACHE_H_
