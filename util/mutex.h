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
#include <shared_mutex>
#include <thread>

#include "absl/base/thread_annotations.h"

namespace graphgc {

class ABSL_LOCKABLE Mutex {
 public:
  // Whether AssertHeld() and AssertReaderHeld() check at run time.
#ifdef NDEBUG
  static constexpr bool kChecksHolders = false;
#else
  static constexpr bool kChecksHolders = true;
#endif

  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mu_.lock();
    if constexpr (kChecksHolders) {
      owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    }
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    if constexpr (kChecksHolders) {
      if (!HeldByThisThread()) Fail("Unlock", "exclusively");
      owner_.store(std::thread::id(), std::memory_order_relaxed);
    }
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
    if constexpr (kChecksHolders) {
      if (!HeldByThisThread()) Fail("AssertHeld", "exclusively");
    }
  }
  // Tells the analysis that the caller holds the lock at least shared;
  // without NDEBUG, stops the program when no thread holds it shared and the
  // calling thread does not hold it exclusively. (Shared holders are
  // counted, not named, so another thread's shared hold passes.)
  void AssertReaderHeld() const ABSL_ASSERT_SHARED_LOCK() {
    if constexpr (kChecksHolders) {
      if (readers_.load(std::memory_order_relaxed) <= 0 &&
          !HeldByThisThread()) {
        Fail("AssertReaderHeld", "at least shared");
      }
    }
  }

 private:
  bool HeldByThisThread() const {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }
  [[noreturn]] static void Fail(const char* what, const char* mode) {
    std::fprintf(stderr,
                 "graphgc: Mutex::%s: the calling thread does not hold the "
                 "lock %s\n",
                 what, mode);
    std::abort();
  }

  std::shared_mutex mu_;
  // The exclusive holder and the count of shared holders; kept only
  // without NDEBUG (present either way, so the layout does not change).
  std::atomic<std::thread::id> owner_{};
  std::atomic<int> readers_{0};
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
