#include "util/mutex.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace graphgc {
namespace {

// What the exclusive side of a lock type needs in these tests: Mutex and
// ExclusiveMutex share it, and the typed tests below run for both.
struct MutexKind {
  using MutexType = Mutex;
  using Lock = WriterLock;
  static constexpr const char* kName = "Mutex";
};
struct ExclusiveMutexKind {
  using MutexType = ExclusiveMutex;
  using Lock = ExclusiveLock;
  static constexpr const char* kName = "ExclusiveMutex";
};

template <typename Kind>
class Counter {
 public:
  void Add() ABSL_LOCKS_EXCLUDED(mu_) {
    typename Kind::Lock l(mu_);
    AddLocked();
  }
  int value() const ABSL_LOCKS_EXCLUDED(mu_) {
    typename Kind::Lock l(mu_);
    return value_;
  }

 private:
  void AddLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    mu_.AssertHeld();
    ++value_;
  }

  mutable typename Kind::MutexType mu_;
  int value_ ABSL_GUARDED_BY(mu_) = 0;
};

// Deliberate misuse for the death tests, which the analysis (rightly) refuses
// to compile unless told not to look.
template <typename M>
void LockAndKeep(M& mu) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  mu.Lock();
}
template <typename M>
void UnlockUnheld(M& mu) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  mu.Unlock();
}

// "<Kind>::<what>: the calling thread does not hold the lock exclusively".
template <typename Kind>
std::string NotHeldMessage(const char* what) {
  return std::string(Kind::kName) + "::" + what +
         ": the calling thread does not hold the lock exclusively";
}

template <typename Kind>
class ExclusiveSide : public testing::Test {};
template <typename Kind>
class ExclusiveSideDeathTest : public testing::Test {};
using Kinds = testing::Types<MutexKind, ExclusiveMutexKind>;
TYPED_TEST_SUITE(ExclusiveSide, Kinds);
TYPED_TEST_SUITE(ExclusiveSideDeathTest, Kinds);

TYPED_TEST(ExclusiveSide, ExclusiveLockSerialisesThreads) {
  Counter<TypeParam> counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) counter.Add();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter.value(), 4000);
}

TYPED_TEST(ExclusiveSide, ExclusiveLockReleasesTheLockAtTheEndOfItsScope) {
  typename TypeParam::MutexType mu;
  { typename TypeParam::Lock l(mu); }
  bool taken = false;
  std::thread([&] {
    typename TypeParam::Lock l(mu);  // would wait forever had it been kept
    taken = true;
  }).join();
  EXPECT_TRUE(taken);
}

TYPED_TEST(ExclusiveSide, AssertHeldPassesForTheThreadHoldingTheLock) {
  typename TypeParam::MutexType mu;
  typename TypeParam::Lock l(mu);
  mu.AssertHeld();
}

TYPED_TEST(ExclusiveSideDeathTest,
           AssertHeldStopsAThreadThatDoesNotHoldTheLock) {
  if (!TypeParam::MutexType::kChecksHolders) GTEST_SKIP() << "NDEBUG build";
  typename TypeParam::MutexType mu;
  EXPECT_DEATH(mu.AssertHeld(), NotHeldMessage<TypeParam>("AssertHeld"));
}

TYPED_TEST(ExclusiveSideDeathTest,
           AssertHeldStopsAThreadWhenAnotherThreadHoldsTheLock) {
  if (!TypeParam::MutexType::kChecksHolders) GTEST_SKIP() << "NDEBUG build";
  EXPECT_DEATH(
      {
        typename TypeParam::MutexType mu;
        std::thread([&mu] { LockAndKeep(mu); }).join();  // left locked by it
        mu.AssertHeld();
      },
      NotHeldMessage<TypeParam>("AssertHeld"));
}

TYPED_TEST(ExclusiveSideDeathTest, UnlockStopsAThreadThatDoesNotHoldTheLock) {
  if (!TypeParam::MutexType::kChecksHolders) GTEST_SKIP() << "NDEBUG build";
  typename TypeParam::MutexType mu;
  EXPECT_DEATH(UnlockUnheld(mu), NotHeldMessage<TypeParam>("Unlock"));
}

// The shared side, Mutex's alone.

TEST(Mutex, AssertReaderHeldPassesUnderAWriterLock) {
  Mutex mu;
  WriterLock l(mu);
  mu.AssertReaderHeld();
}

TEST(Mutex, AssertReaderHeldPassesUnderAReaderLock) {
  Mutex mu;
  ReaderLock l(mu);
  mu.AssertReaderHeld();
}

TEST(Mutex, ReaderLocksAreHeldTogether) {
  Mutex mu;
  ReaderLock first(mu);
  bool second_taken = false;
  std::thread([&] {
    ReaderLock second(mu);  // would wait forever if readers excluded readers
    second_taken = true;
  }).join();
  EXPECT_TRUE(second_taken);
}

// Long enough for a waiter to stop spinning and sleep on the lock's word:
// the tests below then also check that an unlock wakes it.
constexpr std::chrono::milliseconds kWaiterSleeps{20};

// Starts a thread that takes `mu` with a `TakenLock` (WriterLock or
// ReaderLock) and then sets `taken`, and gives it time to sleep on the lock
// the caller holds.
template <typename TakenLock>
std::thread TakeOnAnotherThread(Mutex& mu, std::atomic<bool>& taken) {
  std::thread t([&mu, &taken] {
    TakenLock l(mu);
    taken = true;
  });
  std::this_thread::sleep_for(kWaiterSleeps);
  return t;
}

TEST(Mutex, AReaderWaitsWhileAWriterHoldsTheLock) {
  Mutex mu;
  std::atomic<bool> read{false};
  std::thread reader;
  {
    WriterLock l(mu);
    reader = TakeOnAnotherThread<ReaderLock>(mu, read);
    EXPECT_FALSE(read);
  }
  reader.join();
  EXPECT_TRUE(read);
}

TEST(Mutex, AWriterWaitsUntilTheLastReaderLeaves) {
  Mutex mu;
  std::atomic<bool> written{false};
  std::thread writer;
  {
    ReaderLock first(mu);
    auto second = std::make_unique<ReaderLock>(mu);
    writer = TakeOnAnotherThread<WriterLock>(mu, written);
    second.reset();
    std::this_thread::sleep_for(kWaiterSleeps);
    EXPECT_FALSE(written);  // one reader still holds it
  }
  writer.join();
  EXPECT_TRUE(written);
}

TEST(Mutex, AWriterWaitsWhileAnotherWriterHoldsTheLock) {
  Mutex mu;
  std::atomic<bool> written{false};
  std::thread writer;
  {
    WriterLock l(mu);
    writer = TakeOnAnotherThread<WriterLock>(mu, written);
    EXPECT_FALSE(written);
  }
  writer.join();
  EXPECT_TRUE(written);
}

// Writers keep two fields equal under the lock; readers, holding it shared,
// never see them differ. Short critical sections with a sleep in some, so
// that threads both spin and sleep; TSan (tests/util under --config=tsan)
// also checks that the lock orders every access.
TEST(Mutex, ReadersNeverSeeAWritersChangeHalfDone) {
  Mutex mu;
  int64_t first ABSL_GUARDED_BY(mu) = 0;
  int64_t second ABSL_GUARDED_BY(mu) = 0;
  std::atomic<int> torn{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        WriterLock l(mu);
        ++first;
        if (i % 500 == 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++second;
      }
    });
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        ReaderLock l(mu);
        if (first != second) ++torn;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  WriterLock l(mu);
  EXPECT_EQ(torn, 0);
  EXPECT_EQ(first, 4000);
  EXPECT_EQ(second, 4000);
}

TEST(MutexDeathTest, AssertHeldStopsAThreadHoldingTheLockOnlyShared) {
  if (!Mutex::kChecksHolders) GTEST_SKIP() << "NDEBUG build: no checks";
  Mutex mu;
  ReaderLock l(mu);
  EXPECT_DEATH(mu.AssertHeld(), NotHeldMessage<MutexKind>("AssertHeld"));
}

TEST(MutexDeathTest, AssertReaderHeldStopsWhenNobodyHoldsTheLock) {
  if (!Mutex::kChecksHolders) GTEST_SKIP() << "NDEBUG build: no checks";
  Mutex mu;
  EXPECT_DEATH(mu.AssertReaderHeld(),
               "AssertReaderHeld: the calling thread does not hold the lock "
               "at least shared");
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
