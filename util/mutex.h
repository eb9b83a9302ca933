// util/mutex.h
//
// Mutex: a reader-writer lock over std::shared_mutex that carries Abseil's
// thread-safety annotations. We do not use absl::Mutex because Debian's
// libabsl is not built with ThreadSanitizer, so TSan cannot see its
// synchronisation and reports every access it guards as a race; pthread-based
// std::shared_mutex is intercepted by TSan. The annotations are checked by
// clang's -Wthread-safety (a stage of run_tests.sh).
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
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "absl/base/thread_annotations.h"

namespace graphgc {
namespace mutex_internal {

// Whether the locks below check their holders at run time.
#ifdef NDEBUG
inline constexpr bool kChecksHolders = false;
#else
inline constexpr bool kChecksHolders = true;
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

  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mu_.lock();
    holder_.Took();
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    holder_.Releasing("Mutex");
    mu_.unlock();
  }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() {
    mu_.lock_shared();
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
    mu_.unlock_shared();
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
  [[noreturn]] static void Fail(const char* what, const char* mode) {
    mutex_internal::Fail("Mutex", what, mode);
  }

  std::shared_mutex mu_;
  // The exclusive holder and the count of shared holders; kept only
  // without NDEBUG (present either way, so the layout does not change).
  mutex_internal::ExclusiveHolder holder_;
  std::atomic<int> readers_{0};
};

// ExclusiveMutex: a lock only ever held exclusively, over std::mutex, with
// Mutex's annotations and (without NDEBUG) its run-time holder checks. For
// short critical sections on hot paths that never need shared holders: a
// variable's value (an optimizer step locks each of its variables), a
// pool's free list. Uncontended, a lock and unlock of std::mutex took 3.6-5
// ns on the 2-core machine of the README's benchmarks and of
// std::shared_mutex, exclusively, 20-21 ns (glibc's rwlock takes more
// atomics): a training step of the 10-64-10 MLP took 14 such pairs. Like
// Mutex, TSan sees it (pthread_mutex is intercepted). Not recursive.
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
