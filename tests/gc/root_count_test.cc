#include "gc/root_count.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <thread>

#include "gtest/gtest.h"

namespace graphgc {
namespace gc {
namespace {

// One count, its home thread the thread that makes it.
struct Count {
  HomeThread home;
  std::atomic<int32_t> shared{0};
  std::atomic<int16_t> at_home{0};

  CountRef ref() { return CountRef{.shared = &shared, .home = &at_home}; }
  int32_t read() { return ReadCount(home, ref()); }
};

// Runs `fn` on a new thread (not the count's home) and waits for it.
template <typename Fn>
void OnAnotherThread(Fn fn) {
  std::thread t(fn);
  t.join();
}

TEST(RootCount, TheHomeThreadCountsInTheHomePart) {
  Count c;
  c.shared.store(1);  // the handle a copy is made from
  CountUp(c.home, c.ref());
  CountUp(c.home, c.ref());
  EXPECT_EQ(c.shared.load(), 1);
  EXPECT_EQ(c.at_home.load(), 2);
  EXPECT_EQ(c.read(), 3);
  EXPECT_FALSE(CountDown(c.home, c.ref()));
  EXPECT_EQ(c.at_home.load(), 1);
  EXPECT_EQ(c.read(), 2);
}

TEST(RootCount, AnotherThreadCountsInTheSharedPart) {
  Count c;
  c.shared.store(1);
  OnAnotherThread([&] {
    CountUp(c.home, c.ref());
    CountUp(c.home, c.ref());
  });
  EXPECT_EQ(c.at_home.load(), 0);
  EXPECT_EQ(c.shared.load(), 3);
  EXPECT_EQ(c.read(), 3);
}

TEST(RootCount, EachHomeStoreMovesTheVersionByTwo) {
  Count c;
  c.shared.store(1);
  const uint64_t before = c.home.version();
  CountUp(c.home, c.ref());
  EXPECT_FALSE(CountDown(c.home, c.ref()));
  EXPECT_EQ(c.home.version(), before + 4);
  EXPECT_EQ(c.home.version() % 2, 0u);
}

TEST(RootCount, ACountMadeAtHomeAndDroppedElsewhereSumsToZero) {
  Count c;
  c.shared.store(1);
  CountUp(c.home, c.ref());  // a copy, handed to another thread
  bool last = true;
  OnAnotherThread([&] { last = CountDown(c.home, c.ref()); });
  EXPECT_FALSE(last);  // the first handle is still there
  EXPECT_EQ(c.shared.load(), 0);
  EXPECT_EQ(c.at_home.load(), 1);
  EXPECT_EQ(c.read(), 1);
  // The first handle goes too, also on another thread: parts -1 and 1.
  OnAnotherThread([&] { last = CountDown(c.home, c.ref()); });
  EXPECT_TRUE(last);
  EXPECT_EQ(c.shared.load(), -1);
  EXPECT_EQ(c.read(), 0);
}

TEST(RootCount, AHomeDropThatLeavesZeroSeesIt) {
  Count c;
  c.shared.store(1);
  CountUp(c.home, c.ref());  // home part 1, sum 2
  OnAnotherThread([&] { EXPECT_FALSE(CountDown(c.home, c.ref())); });
  // The shared part is 0 now; the home part holds the last handle.
  EXPECT_TRUE(CountDown(c.home, c.ref()));
  EXPECT_EQ(c.read(), 0);
}

TEST(RootCount, AFullHomePartSpillsIntoTheSharedPart) {
  Count c;
  c.shared.store(1);
  c.at_home.store(std::numeric_limits<int16_t>::max());
  CountUp(c.home, c.ref());
  EXPECT_EQ(c.at_home.load(), std::numeric_limits<int16_t>::max());
  EXPECT_EQ(c.shared.load(), 2);
  EXPECT_EQ(c.read(), 2 + std::numeric_limits<int16_t>::max());
}

TEST(RootCount, AnEmptiedHomePartSpillsIntoTheSharedPart) {
  Count c;
  c.shared.store(5);
  c.at_home.store(std::numeric_limits<int16_t>::min());
  EXPECT_FALSE(CountDown(c.home, c.ref()));
  EXPECT_EQ(c.at_home.load(), std::numeric_limits<int16_t>::min());
  EXPECT_EQ(c.shared.load(), 4);
}

TEST(RootCount, AReadDuringAHomeStoreGivesNothing) {
  Count c;
  c.shared.store(1);
  std::optional<int32_t> during;
  {
    HomeWrite write(c.home);  // the home thread between its two stores
    OnAnotherThread([&] { during = TryReadCount(c.home, c.ref()); });
    EXPECT_EQ(c.home.version() % 2, 1u);
  }
  EXPECT_FALSE(during.has_value());
  EXPECT_EQ(TryReadCount(c.home, c.ref()), std::optional<int32_t>(1));
}

TEST(RootCount, ACountBeingStoredIsTakenAsHeld) {
  Count c;
  std::optional<bool> held;
  {
    HomeWrite write(c.home);
    OnAnotherThread([&] { held = MayBeHeld(c.home, c.ref()); });
  }
  EXPECT_EQ(held, std::optional<bool>(true));
  EXPECT_FALSE(MayBeHeld(c.home, c.ref()));  // zero, read between stores
}

// Handles move between the parts: the home thread copies a handle (home
// part up) and hands it to another thread, which drops it (shared part
// down). It holds one handle throughout and the other thread another. A
// reader on a third thread must never see fewer than two (guarantee 4):
// reading the home part before a copy and the shared part after its drop
// would.
TEST(RootCount, ReadsNeverMissAHandleHeldThroughout) {
  Count c;
  c.shared.store(1);         // held by the other thread
  CountUp(c.home, c.ref());  // held at home
  std::atomic<bool> stop{false};
  std::atomic<int> mailbox{0};  // 1: a copy is on its way to the other thread
  std::atomic<int64_t> reads{0}, short_reads{0};
  std::thread other([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (mailbox.load(std::memory_order_acquire) == 1) {
        CountDown(c.home, c.ref());
        mailbox.store(0, std::memory_order_release);
      }
    }
  });
  std::thread reader([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (std::optional<int32_t> n = TryReadCount(c.home, c.ref())) {
        reads.fetch_add(1, std::memory_order_relaxed);
        if (*n < 2) short_reads.fetch_add(1, std::memory_order_relaxed);
      }
    }
  });
  // 20,000 handovers (or 20 seconds).
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int i = 0; i < 20000 && std::chrono::steady_clock::now() < give_up;
       ++i) {
    CountUp(c.home, c.ref());
    mailbox.store(1, std::memory_order_release);
    while (mailbox.load(std::memory_order_acquire) != 0 &&
           std::chrono::steady_clock::now() < give_up) {
    }
  }
  // A handover the deadline cut short still completes: the other thread
  // drops the last copy before it stops (under TSan on a loaded 2-core
  // machine the deadline came first and the count read 3).
  while (mailbox.load(std::memory_order_acquire) != 0) {
  }
  stop.store(true);
  other.join();
  reader.join();
  EXPECT_EQ(short_reads.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(c.read(), 2);
}

// The same, made certain: inside one read, after the home part is read, the
// home thread copies a handle and the reader's thread drops that copy. The
// sum of the two parts read would miss the handle the home thread holds.
TEST(RootCount, AReadAcrossAHandoverGivesNothingOrTheWholeCount) {
  Count c;
  c.shared.store(1);         // held by the reader's thread
  CountUp(c.home, c.ref());  // held at home
  std::atomic<int> step{0};  // 1: copy now; 2: copied
  std::optional<int32_t> read;
  std::thread reader([&] {
    read = TryReadCountWith(c.home, c.ref(), [&] {
      step.store(1, std::memory_order_release);
      while (step.load(std::memory_order_acquire) != 2) {
      }
      CountDown(c.home, c.ref());  // the copy, dropped here
    });
  });
  while (step.load(std::memory_order_acquire) != 1) {
  }
  CountUp(c.home, c.ref());
  step.store(2, std::memory_order_release);
  reader.join();
  EXPECT_FALSE(read.has_value() && *read < 2) << *read;
  EXPECT_EQ(c.read(), 2);
}

// Marks this thread's arrival at barrier `n` and waits for the other's.
void Arrive(std::atomic<int64_t>& mine, const std::atomic<int64_t>& theirs,
            int64_t n) {
  mine.store(n, std::memory_order_release);
  for (int spins = 0; theirs.load(std::memory_order_acquire) < n; ++spins) {
    if (spins > 1000) std::this_thread::yield();  // the other may be off-CPU
  }
}

// The last two handles dropped at once, one at home and one elsewhere: one
// of the two drops must see the count reach zero (guarantee 3), every time.
// The two threads meet at a barrier before each round's drops, so that the
// drops run together (100,000 rounds, or 10 seconds under a sanitizer).
TEST(RootCount, RacingLastDropsAreSeenByOneOfThem) {
  Count c;
  constexpr int64_t kRounds = 100000;
  std::atomic<int64_t> home_at{0}, other_at{0};
  std::atomic<bool> other_saw{false}, stop{false};
  int64_t rounds = 0, missed = 0;
  std::thread other([&] {
    for (int64_t r = 0;; ++r) {
      Arrive(other_at, home_at, 2 * r + 1);
      if (stop.load(std::memory_order_relaxed)) return;
      other_saw.store(CountDown(c.home, c.ref()), std::memory_order_relaxed);
      Arrive(other_at, home_at, 2 * r + 2);
    }
  });
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (; rounds < kRounds && std::chrono::steady_clock::now() < give_up;
       ++rounds) {
    // Two handles: one counted elsewhere, one at home.
    c.shared.store(1, std::memory_order_relaxed);
    c.at_home.store(1, std::memory_order_relaxed);
    Arrive(home_at, other_at, 2 * rounds + 1);
    const bool home_saw = CountDown(c.home, c.ref());
    Arrive(home_at, other_at, 2 * rounds + 2);
    if (!home_saw && !other_saw.load(std::memory_order_relaxed)) ++missed;
    EXPECT_EQ(c.read(), 0);
  }
  stop.store(true, std::memory_order_relaxed);
  Arrive(home_at, other_at, 2 * rounds + 1);
  other.join();
  EXPECT_EQ(missed, 0) << "of " << rounds << " rounds";
  EXPECT_GT(rounds, 0);
}

// CountDownRoot: a slot's root count.

TEST(RootCountDrop, AHomeDropThatLeavesHandlesReportsTheCountHeld) {
  Count c;
  c.shared.store(1);
  CountUp(c.home, c.ref());  // home part 1, sum 2
  EXPECT_EQ(CountDownRoot(c.home, c.ref()), RootDrop::kHeld);
  EXPECT_EQ(c.at_home.load(), 0);
  EXPECT_EQ(c.read(), 1);
}

TEST(RootCountDrop, AHomeDropThatLeavesZeroReportsTheLast) {
  Count c;
  c.shared.store(1);
  CountUp(c.home, c.ref());  // home part 1, sum 2
  OnAnotherThread([&] { CountDownRoot(c.home, c.ref()); });
  EXPECT_EQ(CountDownRoot(c.home, c.ref()), RootDrop::kLast);
  EXPECT_EQ(c.read(), 0);
}

TEST(RootCountDrop, AHomeDropMovesTheVersionByTwo) {
  Count c;
  c.shared.store(2);
  const uint64_t before = c.home.version();
  CountDownRoot(c.home, c.ref());
  EXPECT_EQ(c.home.version(), before + 2);
}

// Its drop might race a home drop that cannot see it (the home drop takes
// no locked instruction), so a drop elsewhere that does not see zero says
// the count may have reached it.
TEST(RootCountDrop, ADropOnAnotherThreadNeverReportsTheCountHeld) {
  Count c;
  c.shared.store(3);
  RootDrop first = RootDrop::kHeld;
  RootDrop last = RootDrop::kHeld;
  OnAnotherThread([&] {
    first = CountDownRoot(c.home, c.ref());
    CountDownRoot(c.home, c.ref());
    last = CountDownRoot(c.home, c.ref());
  });
  EXPECT_EQ(first, RootDrop::kMaybeLast);
  EXPECT_EQ(last, RootDrop::kLast);
  EXPECT_EQ(c.read(), 0);
}

TEST(RootCountDrop, AnEmptiedHomePartSpillsIntoTheSharedPart) {
  Count c;
  c.shared.store(2);
  c.at_home.store(std::numeric_limits<int16_t>::min());
  EXPECT_EQ(CountDownRoot(c.home, c.ref()), RootDrop::kMaybeLast);
  EXPECT_EQ(c.at_home.load(), std::numeric_limits<int16_t>::min());
  EXPECT_EQ(c.shared.load(), 1);
}

TEST(EventCounter, AddsAtHomeAndOnOtherThreadsAreAllCounted) {
  HomeThread home;
  EventCounter events;
  events.Add(home);
  events.Add(home);
  std::thread([&] {
    events.Add(home);
    events.Add(home);
    events.Add(home);
  }).join();
  EXPECT_EQ(events.Total(), 5);
}

TEST(EventCounter, TheTotalNeverGoesBackWhileThreadsAdd) {
  constexpr int64_t kAdds = 100000;
  HomeThread home;
  EventCounter events;
  std::atomic<bool> done{false};
  int64_t went_back = 0;
  std::thread reader([&] {
    int64_t last = 0;
    while (!done.load(std::memory_order_acquire)) {
      const int64_t now = events.Total();
      if (now < last) ++went_back;
      last = now;
    }
  });
  std::thread elsewhere([&] {
    for (int64_t i = 0; i < kAdds; ++i) events.Add(home);
  });
  for (int64_t i = 0; i < kAdds; ++i) events.Add(home);
  elsewhere.join();
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(went_back, 0);
  EXPECT_EQ(events.Total(), 2 * kAdds);
}

}  // namespace
}  // namespace gc
}  // namespace graphgc
