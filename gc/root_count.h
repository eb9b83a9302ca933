// gc/root_count.h
//
// Root counts: how many strong handles hold a slot (Slot) or carry one owner
// label on it (SlotLabel), kept so that the heap's home thread copies and
// drops handles without a locked instruction. The home thread is the thread
// that made the heap (a Graph's constructor): where a program that does not
// share its graph between threads does everything. This is biased reference
// counting (Choi, Shull and Torrellas, PACT 2018), with a seqlock for the
// collector's reads instead of the paper's queue of merges.
//
// A count is the sum of two numbers (CountRef names both):
//  - `shared`, changed by any thread with atomic read-modify-writes;
//  - `home`, 16 bits, changed only by the home thread, with plain stores,
//    each inside the heap's seqlock (HomeThread::version odd meanwhile).
// Either may be negative: a handle counted at home and dropped on another
// thread is uncounted from `shared`. When a step would take `home` out of
// its range, the home thread counts in `shared` instead.
//
// Guarantees:
//  1. CountUp, CountDown and CountDownRoot keep the sum exact: after every
//     copy and drop has returned, it is the number of handles.
//  2. Copying a handle at home is three plain stores (version, count,
//     version); dropping one is the same with CountDownRoot (a slot's root
//     count) and one exchange in place of the count's store with CountDown
//     (a label's count, where the last drop must be seen: guarantee 3). No
//     lock is taken either way.
//  3. When the count reaches zero, at least one of the threads whose
//     CountDown took part sees it (returns true); two may both see it, so
//     what a last drop does must be safe to do twice (the heap's drop
//     counters are hints; an owner label's entry is removed under its lock,
//     after a ReadCount). CountDown reads the other part after its own
//     decrement, when its handle no longer holds the count: the count's
//     memory must outlive that read. Slots are never freed, and owner-label
//     entries are type-stable (gc/heap.h's SlotLabel), so a late read is of
//     a count, if perhaps another one, and at worst a false "reached zero".
//     CountDownRoot gives less: when the count reaches zero, one of the
//     drops that took part sees it or one of them ran on another thread
//     (and says it may have: RootDrop::kMaybeLast); its home drop takes no
//     locked instruction. A slot's root count is uncounted only with it.
//  4. TryReadCount returns a sum that counts every handle alive during the
//     whole read (it may also count one that went meanwhile), or nothing
//     when the home thread changed a count meanwhile: the collector then
//     takes the slot as a root. ReadCount retries until it reads one.
//
// Why 4 holds: on the home thread, `home` is this thread's own, and a
// `shared` read after it includes every increment that happened before one
// of its home stores. Elsewhere the read is version (acquire), `home`
// (acquire), `shared` (acquire), version again, and is kept only when both
// versions are the same even number. Then `home` is the home count at that
// version: a later store would have been preceded by an odd version that the
// second read sees. A handle counted at home and dropped elsewhere: its count's
// store and the version after it happen before the drop, so a `shared` that
// includes the drop makes the second version read see them, and `home`
// includes the count. A handle counted in `shared` and dropped at home: the
// count's increment happens before the home store that `home` read, so
// `shared` includes it.
//
// Thread identity is the thread pointer (unique among live threads). A
// thread made after the home thread exited may be given the same one and
// become the heap's home thread: it starts after the old one's last store
// (the C library hands a thread's pointer to a new thread only after the old
// one has exited, under its own lock), so there is still one writer at a
// time.
#ifndef GRAPHGC_GC_ROOT_COUNT_H_
#define GRAPHGC_GC_ROOT_COUNT_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <thread>

namespace graphgc {
namespace gc {

// The calling thread's identity: its thread pointer.
inline uintptr_t CurrentThreadId() {
#if defined(__x86_64__)
  uintptr_t tp;
  asm("mov %%fs:0, %0" : "=r"(tp));
  return tp;
#else
  return static_cast<uintptr_t>(pthread_self());
#endif
}

// A heap's home thread and the seqlock version of its home counts.
class HomeThread {
 public:
  // The calling thread is home.
  HomeThread() : thread_(CurrentThreadId()) {}
  HomeThread(const HomeThread&) = delete;
  HomeThread& operator=(const HomeThread&) = delete;

  bool IsCurrent() const { return CurrentThreadId() == thread_; }
  // Odd while the home thread stores a home count.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

 private:
  friend class HomeWrite;
  // Apart, on cache lines of their own: every thread reads `thread_` on
  // each copy and drop, while the home thread writes `version_`.
  alignas(64) const uintptr_t thread_;
  alignas(64) std::atomic<uint64_t> version_{0};
};

// Where a count lives: its shared and home parts. Empty for an empty handle.
struct CountRef {
  std::atomic<int32_t>* shared = nullptr;
  std::atomic<int16_t>* home = nullptr;

  bool valid() const { return shared != nullptr; }
};

// One store of a home count, between the two version stores. Only the home
// thread makes one.
class HomeWrite {
 public:
  explicit HomeWrite(HomeThread& home)
      : home_(home), version_(home.version_.load(std::memory_order_relaxed)) {
    home_.version_.store(version_ + 1, std::memory_order_relaxed);
  }
  HomeWrite(const HomeWrite&) = delete;
  HomeWrite& operator=(const HomeWrite&) = delete;
  ~HomeWrite() {
    home_.version_.store(version_ + 2, std::memory_order_release);
  }

 private:
  HomeThread& home_;
  const uint64_t version_;
};

// How StepAtHome stores the home part.
enum class HomeStore {
  kPlain,     // a store (release)
  kExchange,  // a sequentially consistent exchange (a locked instruction)
};

// On the home thread, steps its part of `count` by `delta` (+1 or -1)
// inside the seqlock and returns the new value; nothing on another thread
// or when the step would leave int16_t's range, where the caller steps the
// shared part instead.
inline std::optional<int16_t> StepAtHome(HomeThread& home, CountRef count,
                                         int delta, HomeStore how) {
  if (!home.IsCurrent()) return std::nullopt;
  const int next = count.home->load(std::memory_order_relaxed) + delta;
  if (next > std::numeric_limits<int16_t>::max() ||
      next < std::numeric_limits<int16_t>::min()) {
    return std::nullopt;
  }
  const auto value = static_cast<int16_t>(next);
  HomeWrite write(home);
  // Release at least: a reader whose `home` read sees this sees the odd
  // version.
  if (how == HomeStore::kExchange) {
    count.home->exchange(value, std::memory_order_seq_cst);
  } else {
    count.home->store(value, std::memory_order_release);
  }
  return value;
}

// Uncounts one handle from `count`'s shared part (sequentially consistent):
// true when the sum it then reads is zero.
inline bool SharedDownSeesZero(CountRef count) {
  const int32_t left =
      count.shared->fetch_sub(1, std::memory_order_seq_cst) - 1;
  return left + count.home->load(std::memory_order_seq_cst) == 0;
}

// Counts one more handle in `count`, a count above zero (the new handle is a
// copy of one that `count` counts, or the caller holds the slot's lock).
inline void CountUp(HomeThread& home, CountRef count) {
  if (StepAtHome(home, count, +1, HomeStore::kPlain)) return;
  count.shared->fetch_add(1, std::memory_order_relaxed);
}

// Uncounts one handle from `count`; true when the count reached zero
// (guarantee 3). Sequentially consistent on both sides, so that of a home
// drop and another thread's racing drop, at least one sees the other's.
inline bool CountDown(HomeThread& home, CountRef count) {
  if (std::optional<int16_t> left =
          StepAtHome(home, count, -1, HomeStore::kExchange)) {
    return *left + count.shared->load(std::memory_order_seq_cst) == 0;
  }
  return SharedDownSeesZero(count);
}

// A count of events that only grows (a heap's drops), kept like a root
// count so that the home thread adds to it without a locked instruction:
// the home thread's adds are plain stores to a part only it writes, other
// threads' adds are atomic adds to a shared part. Total() sums the two: it
// includes every Add that happened before it, may miss one still in flight
// on another thread, and never goes back. (A locked `fetch_add` on every
// last drop of a node's handle would be a locked instruction a node, a few
// nanoseconds against a node's build of a couple of hundred.)
class EventCounter {
 public:
  void Add(const HomeThread& home) {
    if (home.IsCurrent()) {
      // The only writer of home_ (one home thread at a time, see above).
      home_.store(home_.load(std::memory_order_relaxed) + 1,
                  std::memory_order_release);
    } else {
      shared_.fetch_add(1, std::memory_order_acq_rel);
    }
  }
  int64_t Total() const {
    return home_.load(std::memory_order_acquire) +
           shared_.load(std::memory_order_acquire);
  }

 private:
  std::atomic<int64_t> home_{0};
  std::atomic<int64_t> shared_{0};
};

// What CountDownRoot tells its caller to note.
enum class RootDrop {
  kHeld,       // the count is still above zero
  kLast,       // the count reached zero
  kMaybeLast,  // a drop on another thread: the count may have reached zero
};

// Uncounts one handle from a slot's root count, where a count that reached
// zero is news only for the collector's scheduling (Heap::NoteDrop), not for
// bookkeeping that must happen once (a label's entry: CountDown). At home it
// takes no locked instruction: the home part is stored as CountUp stores it
// and the shared part read after, so the store may still wait in the store
// buffer while the read is done (x86 lets a load pass an earlier store), and
// a home drop racing another thread's can miss the zero they made together.
// Another thread's drop (an atomic subtract, as CountDown's) therefore reports
// kMaybeLast whenever it does not see zero itself: of any set of drops that
// take a count to zero, one reports kLast or one ran on another thread and
// reports kMaybeLast. A home drop reports kLast when it sees zero, else kHeld.
// (A locked exchange for a home drop would cost a locked instruction for
// each handle dropped at home, three per node of a large graph's build.)
inline RootDrop CountDownRoot(HomeThread& home, CountRef count) {
  if (std::optional<int16_t> left =
          StepAtHome(home, count, -1, HomeStore::kPlain)) {
    return *left + count.shared->load(std::memory_order_acquire) == 0
               ? RootDrop::kLast
               : RootDrop::kHeld;
  }
  return SharedDownSeesZero(count) ? RootDrop::kLast : RootDrop::kMaybeLast;
}

// TryReadCount with `between` called after the home part is read and
// before the shared part: for tests that change the count inside a read.
template <typename Between>
std::optional<int32_t> TryReadCountWith(const HomeThread& home, CountRef count,
                                        Between between) {
  if (home.IsCurrent()) {
    // No other thread stores a home count, and this one is not storing.
    const int16_t at_home = count.home->load(std::memory_order_relaxed);
    between();
    return count.shared->load(std::memory_order_acquire) + at_home;
  }
  const uint64_t before = home.version();
  if ((before & 1) != 0) return std::nullopt;
  const int16_t at_home = count.home->load(std::memory_order_acquire);
  between();
  const int32_t shared = count.shared->load(std::memory_order_acquire);
  if (home.version() != before) return std::nullopt;
  return shared + at_home;
}

// The count, or nothing when the home thread stored a home count meanwhile
// (guarantee 4).
inline std::optional<int32_t> TryReadCount(const HomeThread& home,
                                           CountRef count) {
  return TryReadCountWith(home, count, [] {});
}

// The count, read again until the home thread is between two stores.
inline int32_t ReadCount(const HomeThread& home, CountRef count) {
  for (int tries = 0;; ++tries) {
    if (std::optional<int32_t> n = TryReadCount(home, count)) return *n;
    if (tries >= 64) std::this_thread::yield();
  }
}

// Whether `count` may be above zero, for the collector's roots: a count
// read while the home thread keeps storing is taken as above zero.
inline bool MayBeHeld(const HomeThread& home, CountRef count) {
  for (int tries = 0; tries < 4; ++tries) {
    if (std::optional<int32_t> n = TryReadCount(home, count)) return *n > 0;
  }
  return true;
}

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_ROOT_COUNT_H_
