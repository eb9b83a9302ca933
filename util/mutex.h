// util/mutex.h
//
// Mutex: a reader-writer lock over std::shared_mutex that carries Abseil's
// thread-safety annotations. We do not use absl::Mutex because Debian's
// libabsl is not built with ThreadSanitizer, so TSan cannot see its
// synchronisation and reports every access it guards as a race; pthread-based
// std::shared_mutex is intercepted by TSan. The annotations are checked by
// clang's -Wthread-safety.
//
// Example:
//   Mutex mu_;
//   int count_ ABSL_GUARDED_BY(mu_);
//   void Inc() ABSL_LOCKS_EXCLUDED(mu_) { WriterLock l(mu_); ++count_; }
#ifndef GRAPHGC_UTIL_MUTEX_H_
#define GRAPHGC_UTIL_MUTEX_H_

#include <cassert>
#include <mutex>
#include <shared_mutex>

#include "absl/base/thread_annotations.h"

namespace graphgc {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

  // Documents (and tells the analysis) that the caller holds the lock. The
  // standard mutex cannot be asked, so this is a no-op at run time.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}
  void AssertReaderHeld() const ABSL_ASSERT_SHARED_LOCK() {}

 private:
  std::shared_mutex mu_;
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

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_MUTEX_H_
