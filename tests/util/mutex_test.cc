#include "util/mutex.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace graphgc {
namespace {

class Counter {
 public:
  void Add() ABSL_LOCKS_EXCLUDED(mu_) {
    WriterLock l(mu_);
    AddLocked();
  }
  int value() const ABSL_LOCKS_EXCLUDED(mu_) {
    ReaderLock l(mu_);
    return value_;
  }

 private:
  void AddLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    mu_.AssertHeld();
    ++value_;
  }

  mutable Mutex mu_;
  int value_ ABSL_GUARDED_BY(mu_) = 0;
};

// Deliberate misuse for the death tests, which the analysis (rightly) refuses
// to compile unless told not to look.
void LockAndKeep(Mutex& mu) ABSL_NO_THREAD_SAFETY_ANALYSIS { mu.Lock(); }
void UnlockUnheld(Mutex& mu) ABSL_NO_THREAD_SAFETY_ANALYSIS { mu.Unlock(); }

TEST(Mutex, WriterLockSerialisesWriters) {
  Counter counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) counter.Add();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter.value(), 4000);
}

TEST(Mutex, AssertHeldPassesForTheThreadHoldingTheLock) {
  Mutex mu;
  WriterLock l(mu);
  mu.AssertHeld();
  mu.AssertReaderHeld();
}

TEST(Mutex, AssertReaderHeldPassesUnderAReaderLock) {
  Mutex mu;
  ReaderLock l(mu);
  mu.AssertReaderHeld();
}

TEST(MutexDeathTest, AssertHeldStopsAThreadThatDoesNotHoldTheLock) {
  if (!Mutex::kChecksHolders) GTEST_SKIP() << "NDEBUG build: no checks";
  Mutex mu;
  EXPECT_DEATH(mu.AssertHeld(),
               "AssertHeld: the calling thread does not hold the lock "
               "exclusively");
}

TEST(MutexDeathTest, AssertHeldStopsAThreadWhenAnotherThreadHoldsTheLock) {
  if (!Mutex::kChecksHolders) GTEST_SKIP() << "NDEBUG build: no checks";
  EXPECT_DEATH(
      {
        Mutex mu;
        std::thread([&mu] { LockAndKeep(mu); }).join();  // left locked by it
        mu.AssertHeld();
      },
      "AssertHeld: the calling thread does not hold the lock exclusively");
}

TEST(MutexDeathTest, AssertHeldStopsAThreadHoldingTheLockOnlyShared) {
  if (!Mutex::kChecksHolders) GTEST_SKIP() << "NDEBUG build: no checks";
  Mutex mu;
  ReaderLock l(mu);
  EXPECT_DEATH(mu.AssertHeld(), "AssertHeld");
}

TEST(MutexDeathTest, AssertReaderHeldStopsWhenNobodyHoldsTheLock) {
  if (!Mutex::kChecksHolders) GTEST_SKIP() << "NDEBUG build: no checks";
  Mutex mu;
  EXPECT_DEATH(mu.AssertReaderHeld(),
               "AssertReaderHeld: the calling thread does not hold the lock "
               "at least shared");
}

TEST(MutexDeathTest, UnlockStopsAThreadThatDoesNotHoldTheLock) {
  if (!Mutex::kChecksHolders) GTEST_SKIP() << "NDEBUG build: no checks";
  Mutex mu;
  EXPECT_DEATH(UnlockUnheld(mu), "Unlock: the calling thread does not hold");
}

TEST(CondVar, WaitReturnsOnceTheConditionIsSignalled) {
  Mutex mu;
  CondVar changed;
  bool ready = false;
  std::thread setter([&] {
    {
      WriterLock l(mu);
      ready = true;
    }
    changed.SignalAll();
  });
  {
    WriterLock l(mu);
    while (!ready) changed.Wait(mu);
    mu.AssertHeld();  // held again after the wait
    EXPECT_TRUE(ready);
  }
  setter.join();
}

}  // namespace
}  // namespace graphgc
