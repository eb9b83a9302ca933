// util/mutex.h
//
// Mutex: a reader-writer lock of our own, one 32-bit word, that carries
// Abseil's thread-safety annotations. Uncontended, a lock and an unlock are
// one compare-and-swap each, inline, for writers and readers alike; a
// thread that must wait spins briefly, then sleeps on a futex. Not
// std::shared_mutex: glibc's pthread_rwlock costs a call and three locked
// instructions per writer's lock and unlock (gc_bench's WriterLockUnlock
// rows compare the two), and every node AddNode makes takes the graph's
// lock once, so that pair is a visible share of building a large graph.
//
// ThreadSanitizer sees it as a mutex: its lock and unlock are annotated with
// TSan's mutex interface (sanitizer/tsan_interface.h), so TSan orders the
// accesses the lock guards, checks lock order (its deadlock detector) and
// reports an unlock of a lock nobody holds. We do not use absl::Mutex because
// Debian's libabsl is not built with ThreadSanitizer, so its annotations are
// compiled out and TSan reports every access it guards as a race. The
// annotations are checked by clang's -Wthread-safety (a stage of
// run_tests.sh).
//
// Readers are preferred, as glibc's rwlock prefers them by default: a reader
// takes the lock whenever no writer holds it, so a stream of overlapping
// readers can keep a writer waiting. Linux only (futex).
//
// In builds without NDEBUG the lock also knows its holders, so AssertHeld()
// and AssertReaderHeld() check at run time what they tell the analysis, and
// unlocking a lock the thread does not hold stops the program with a
// message. With NDEBUG they cost nothing. (Every translation unit of one
// program must agree on NDEBUG, as with assert.)
//
// Not recursive: a thread that locks a Mutex it holds deadlocks.
//
// Example:
//   Mutex mu_;
//   int count_ ABSL_GUARDED_BY(mu_);
//   void Inc() ABSL_LOCKS_EXCLUDED(mu_) { WriterLock l(mu_); ++count_; }
//   void IncLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
//     mu_.AssertHeld();
//     ++count_;
//   }
#ifndef GRAPHGC_UTIL_MUTEX_H_
#define GRAPHGC_UTIL_MUTEX_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"

#if defined(__SANITIZE_THREAD__)
#define GRAPHGC_MUTEX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GRAPHGC_MUTEX_TSAN 1
#endif
#endif
#ifdef GRAPHGC_MUTEX_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace graphgc {
namespace mutex_internal {

// Whether the locks below check their holders at run time.
#ifdef NDEBUG
inline constexpr bool kChecksHolders = false;
#else
inline constexpr bool kChecksHolders = true;
#endif

// TSan's mutex annotations (no-ops in other builds). Between a Pre and its
// Post, TSan ignores the lock word's own atomics: it orders the threads by
// the lock itself.
#ifdef GRAPHGC_MUTEX_TSAN
inline constexpr unsigned kTsanReadLock = __tsan_mutex_read_lock;
inline void TsanCreate(void* mu) { __tsan_mutex_create(mu, 0); }
inline void TsanDestroy(void* mu) { __tsan_mutex_destroy(mu, 0); }
inline void TsanPreLock(void* mu, unsigned flags) {
  __tsan_mutex_pre_lock(mu, flags);
}
inline void TsanPostLock(void* mu, unsigned flags) {
  __tsan_mutex_post_lock(mu, flags, 0);
}
inline void TsanPreUnlock(void* mu, unsigned flags) {
  __tsan_mutex_pre_unlock(mu, flags);
}
inline void TsanPostUnlock(void* mu, unsigned flags) {
  __tsan_mutex_post_unlock(mu, flags);
}
#else
inline constexpr unsigned kTsanReadLock = 0;
inline void TsanCreate(void*) {}
inline void TsanDestroy(void*) {}
inline void TsanPreLock(void*, unsigned) {}
inline void TsanPostLock(void*, unsigned) {}
inline void TsanPreUnlock(void*, unsigned) {}
inline void TsanPostUnlock(void*, unsigned) {}
#endif

// Stops the program: `what` (a member of `type`) was called by a thread
// that does not hold the lock as `mode` requires.
[[noreturn]] inline void Fail(const char* type, const char* what,
                              const char* mode) {
  std::fprintf(stderr,
               "graphgc: %s::%s: the calling thread does not hold the lock "
               "%s\n",
               type, what, mode);
  std::abort();
}

// The thread that holds a lock exclusively, recorded only when
// kChecksHolders (present either way, so the layout does not change).
// `type` names the lock in the messages.
class ExclusiveHolder {
 public:
  // Call with the lock just taken.
  void Took() {
    if constexpr (kChecksHolders) {
      owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    }
  }
  // Call before releasing the lock; stops the program when the calling
  // thread does not hold it.
  void Releasing(const char* type) {
    if constexpr (kChecksHolders) {
      Check(type, "Unlock");
      owner_.store(std::thread::id(), std::memory_order_relaxed);
    }
  }
  // Stops the program (`type`::`what` in the message) when the calling
  // thread does not hold the lock exclusively.
  void Check(const char* type, const char* what) const {
    if constexpr (kChecksHolders) {
      if (!HeldByThisThread()) Fail(type, what, "exclusively");
    }
  }
  bool HeldByThisThread() const {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }

 private:
  std::atomic<std::thread::id> owner_{};
};

}  // namespace mutex_internal

class ABSL_LOCKABLE Mutex {
 public:
  // Whether AssertHeld() and AssertReaderHeld() check at run time.
  static constexpr bool kChecksHolders = mutex_internal::kChecksHolders;

  Mutex() { mutex_internal::TsanCreate(this); }
  ~Mutex() { mutex_internal::TsanDestroy(this); }
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mutex_internal::TsanPreLock(this, 0);
    uint32_t free = 0;
    if (!state_.compare_exchange_strong(free, kWriter,
                                        std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
      LockSlow();
    }
    mutex_internal::TsanPostLock(this, 0);
    holder_.Took();
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    holder_.Releasing("Mutex");
    mutex_internal::TsanPreUnlock(this, 0);
    // A writer holds it, so no reader does: the word is kWriter, or
    // kWriter | kWaiting when a thread sleeps on it.
    uint32_t held = kWriter;
    if (!state_.compare_exchange_strong(held, 0, std::memory_order_release,
                                        std::memory_order_relaxed)) {
      // kWriter | kWaiting, which no other thread changes: waiters change
      // the word only when kWriter or kWaiting is clear.
      state_.store(0, std::memory_order_release);
      WakeSleepers();
    }
    mutex_internal::TsanPostUnlock(this, 0);
  }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() {
    mutex_internal::TsanPreLock(this, mutex_internal::kTsanReadLock);
    uint32_t now = state_.load(std::memory_order_relaxed);
    if ((now & kWriter) != 0 ||
        !state_.compare_exchange_strong(now, now + kReader,
                                        std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
      ReaderLockSlow();
    }
    mutex_internal::TsanPostLock(this, mutex_internal::kTsanReadLock);
    if constexpr (kChecksHolders) {
      readers_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() {
    if constexpr (kChecksHolders) {
      if (readers_.fetch_sub(1, std::memory_order_relaxed) <= 0) {
        Fail("ReaderUnlock", "shared");
      }
    }
    mutex_internal::TsanPreUnlock(this, mutex_internal::kTsanReadLock);
    // Only writers wait while readers hold the lock: the last reader out
    // clears kWaiting in the same step and wakes them.
    uint32_t now = state_.load(std::memory_order_relaxed);
    uint32_t next;
    do {
      next = now - kReader;
      if ((next & kReaders) == 0) next &= ~kWaiting;
    } while (!state_.compare_exchange_weak(now, next, std::memory_order_release,
                                           std::memory_order_relaxed));
    if ((now & kWaiting) != 0 && (next & kWaiting) == 0) WakeSleepers();
    mutex_internal::TsanPostUnlock(this, mutex_internal::kTsanReadLock);
  }

  // Tells the analysis that the caller holds the lock exclusively; without
  // NDEBUG, stops the program with a message when the calling thread does
  // not.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {
    holder_.Check("Mutex", "AssertHeld");
  }
  // Tells the analysis that the caller holds the lock at least shared;
  // without NDEBUG, stops the program when no thread holds it shared and the
  // calling thread does not hold it exclusively. (Shared holders are
  // counted, not named, so another thread's shared hold passes.)
  void AssertReaderHeld() const ABSL_ASSERT_SHARED_LOCK() {
    if constexpr (kChecksHolders) {
      if (readers_.load(std::memory_order_relaxed) <= 0 &&
          !holder_.HeldByThisThread()) {
        Fail("AssertReaderHeld", "at least shared");
      }
    }
  }

 private:
  // The lock word: kWriter while a writer holds the lock, the number of
  // readers holding it in units of kReader, and kWaiting while a thread
  // may be asleep on the word (set by the sleeper before it sleeps; cleared
  // by the unlock that wakes every sleeper, in the same atomic step as the
  // release: after it, the unlocking thread touches only the futex, as a
  // waiter that gets the lock may destroy the Mutex at once).
  static constexpr uint32_t kWriter = 1;
  static constexpr uint32_t kWaiting = 2;
  static constexpr uint32_t kReader = 4;
  static constexpr uint32_t kReaders = ~(kWriter | kWaiting);

  [[noreturn]] static void Fail(const char* what, const char* mode) {
    mutex_internal::Fail("Mutex", what, mode);
  }
  // The waits and wakes behind the inline paths (util/mutex.cc).
  void LockSlow();
  void ReaderLockSlow();
  // Waits until no bit of `blocked_by` is set in the word, then adds `add`
  // to it (with acquire ordering).
  void Acquire(uint32_t blocked_by, uint32_t add);
  // Wakes every sleeper (the caller has cleared kWaiting): one that must
  // wait again sets it again before it sleeps.
  void WakeSleepers();
  // Sleeps while the word is `expected` (returns at once when it is not,
  // and may return spuriously).
  void Sleep(uint32_t expected);

  std::atomic<uint32_t> state_{0};
  // The exclusive holder and the count of shared holders; kept only
  // without NDEBUG (present either way, so the layout does not change).
  mutex_internal::ExclusiveHolder holder_;
  std::atomic<int> readers_{0};
};

// ExclusiveMutex: a lock only ever held exclusively, over std::mutex, with
// Mutex's annotations and (without NDEBUG) its run-time holder checks. For
// short critical sections on hot paths that never need shared holders: a
// variable's value (an optimizer step locks each of its variables), a
// pool's free list. Uncontended, std::mutex's lock and unlock is a few
// nanoseconds, several times cheaper than std::shared_mutex held
// exclusively, and a training step of a small MLP takes a dozen such
// pairs. Like Mutex, TSan sees it (pthread_mutex is intercepted). Not
// recursive.
class ABSL_LOCKABLE ExclusiveMutex {
 public:
  static constexpr bool kChecksHolders = mutex_internal::kChecksHolders;

  ExclusiveMutex() = default;
  ExclusiveMutex(const ExclusiveMutex&) = delete;
  ExclusiveMutex& operator=(const ExclusiveMutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mu_.lock();
    holder_.Took();
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    holder_.Releasing("ExclusiveMutex");
    mu_.unlock();
  }

  // Tells the analysis that the caller holds the lock; without NDEBUG,
  // stops the program with a message when the calling thread does not.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {
    holder_.Check("ExclusiveMutex", "AssertHeld");
  }

 private:
  std::mutex mu_;
  mutex_internal::ExclusiveHolder holder_;
};

// ExclusiveMutex's lock for a scope.
class ABSL_SCOPED_LOCKABLE ExclusiveLock {
 public:
  explicit ExclusiveLock(ExclusiveMutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_.Lock();
  }
  ~ExclusiveLock() ABSL_UNLOCK_FUNCTION() { mu_.Unlock(); }
  ExclusiveLock(const ExclusiveLock&) = delete;
  ExclusiveLock& operator=(const ExclusiveLock&) = delete;

 private:
  ExclusiveMutex& mu_;
};

// Exclusive lock for a scope.
class ABSL_SCOPED_LOCKABLE WriterLock {
 public:
  explicit WriterLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_.Lock();
  }
  ~WriterLock() ABSL_UNLOCK_FUNCTION() { mu_.Unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  Mutex& mu_;
};

// Shared lock for a scope.
class ABSL_SCOPED_LOCKABLE ReaderLock {
 public:
  explicit ReaderLock(Mutex& mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_.ReaderLock();
  }
  ~ReaderLock() ABSL_UNLOCK_FUNCTION() { mu_.ReaderUnlock(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  Mutex& mu_;
};

// CondVar: waiting for a condition on state a Mutex guards.
//
// Example:
//   WriterLock l(mu_);
//   while (busy_) idle_.Wait(mu_);
//   ...
//   // elsewhere, having cleared busy_ under mu_:
//   idle_.SignalAll();
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu` (held exclusively by the caller), sleeps until signalled
  // (or spuriously woken: callers loop on their condition), and takes `mu`
  // again before returning.
  void Wait(Mutex& mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Relock relock{mu};
    cv_.wait(relock);
  }
  // Wakes every waiter.
  void SignalAll() { cv_.notify_all(); }

 private:
  // What std::condition_variable_any unlocks and relocks. The analysis
  // would see the caller's lock released and taken back inside Wait, which
  // keeps holding it as far as the caller can tell; so these two are not
  // analysed.
  struct Relock {
    Mutex& mu;
    void lock() ABSL_NO_THREAD_SAFETY_ANALYSIS { mu.Lock(); }
    void unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS { mu.Unlock(); }
  };

  std::condition_variable_any cv_;
};

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_MUTEX_H_
