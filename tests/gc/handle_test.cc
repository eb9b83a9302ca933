#include "gc/handle.h"

#include <atomic>
#include <barrier>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "tests/gc/test_graph.h"
#include "util/mutex.h"

namespace graphgc {
namespace {

using testing::AddTestNode;

// The heap's strong count of `h`'s node, read under the heap's lock as
// Heap::strong_count requires.
int32_t StrongCount(const Graph& g, const NodeHandle& h) {
  ReaderLock lock(g.heap().mu());
  return g.heap().strong_count(h.id().index);
}

TEST(NodeHandle, DefaultHandleIsEmpty) {
  NodeHandle h;
  EXPECT_FALSE(h.valid());
  EXPECT_EQ(h.graph(), nullptr);
}

TEST(NodeHandle, CopiesCompareEqualAndCountAsRoots) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = a;
  EXPECT_EQ(a, b);
  EXPECT_EQ(StrongCount(g, a), 2);
  b.Reset();
  EXPECT_EQ(StrongCount(g, a), 1);
}

TEST(NodeHandle, DistinctNodesCompareUnequal) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b");
  EXPECT_NE(a, b);
}

TEST(NodeHandle, MovedFromHandleIsEmptyAndDoesNotHold) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): tested
  EXPECT_EQ(StrongCount(g, b), 1);
}

TEST(NodeHandle, LastDropIsCountedForTheCollector) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  const int64_t drops = g.heap().drops();
  NodeHandle copy = a;
  copy.Reset();
  EXPECT_EQ(g.heap().drops(), drops);  // a still holds it
  a.Reset();
  EXPECT_EQ(g.heap().drops(), drops + 1);
}

TEST(NodeHandle, OwnerLabelTravelsWithCopies) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a").WithOwner("Sequential 'm'");
  NodeHandle b = a;
  EXPECT_EQ(b.owner(), "Sequential 'm'");
  std::vector<std::pair<std::string, int32_t>> labels;
  {
    ReaderLock lock(g.heap().mu());
    labels = g.heap().RootLabels(a.id().index);
  }
  ASSERT_EQ(labels.size(), 1u);
  EXPECT_EQ(labels[0].first, "Sequential 'm'");
  EXPECT_EQ(labels[0].second, 2);
}

TEST(NodeHandle, CopiesOfALabelledHandleShareOneRootCount) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle l1 = a.WithOwner("Sequential 'm'");
  EXPECT_EQ(StrongCount(g, a), 2);  // a, and the label's entry
  NodeHandle l2 = l1;
  NodeHandle l3 = l2;
  EXPECT_EQ(StrongCount(g, a), 2);  // copies count in the entry
  l1.Reset();
  l2.Reset();
  EXPECT_EQ(StrongCount(g, a), 2);
  l3.Reset();  // the label's last handle: the entry goes
  EXPECT_EQ(StrongCount(g, a), 1);
}

TEST(NodeHandle, EmptyOwnerMakesAnUnlabelledCopy) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle copy = a.WithOwner("");
  EXPECT_EQ(copy, a);
  EXPECT_EQ(copy.owner(), "");
  EXPECT_EQ(StrongCount(g, a), 2);
  const int64_t drops = g.heap().drops();
  a.Reset();
  copy.Reset();
  EXPECT_EQ(g.heap().drops(), drops + 1);
}

TEST(NodeHandle, LabelTableEmptiesWhenLabelledHandlesGo) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  const size_t before = g.heap().label_table_size();
  {
    NodeHandle l1 = a.WithOwner("owner one");
    NodeHandle l2 = l1;
    EXPECT_GT(g.heap().label_table_size(), before);
  }
  EXPECT_EQ(g.heap().label_table_size(), before);
}

TEST(WeakNodeHandle, LocksWhileTheNodeLives) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  WeakNodeHandle weak(a);
  g.Collect();
  std::optional<NodeHandle> locked = weak.Lock();
  ASSERT_TRUE(locked.has_value());
  EXPECT_EQ(*locked, a);
}

TEST(WeakNodeHandle, DoesNotKeepTheNodeAlive) {
  Graph g;
  WeakNodeHandle weak(AddTestNode(g, "a"));
  EXPECT_EQ(g.Collect().swept, 1);
}

TEST(WeakNodeHandle, ExpiresExactlyWhenTheNodeIsSwept) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  WeakNodeHandle weak(a);
  a.Reset();
  // Unreachable but not yet swept: still there.
  EXPECT_FALSE(weak.expired());
  g.Collect();
  EXPECT_TRUE(weak.expired());
  EXPECT_FALSE(weak.Lock().has_value());
}

TEST(WeakNodeHandle, NeverLocksTheNextOccupantOfItsSlot) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  WeakNodeHandle weak(a);
  const uint32_t slot = a.id().index;
  a.Reset();
  g.Collect();
  NodeHandle b = AddTestNode(g, "b");
  ASSERT_EQ(b.id().index, slot);          // the slot was reused...
  EXPECT_FALSE(weak.Lock().has_value());  // ...but the generation differs
}

TEST(WeakNodeHandle, EmptyWeakHandleLocksToNothing) {
  WeakNodeHandle weak;
  EXPECT_FALSE(weak.Lock().has_value());
}

// Destroys `h` on a thread other than the graph's home thread.
void DropOnAnotherThread(NodeHandle h) {
  std::thread([h = std::move(h)]() mutable { h.Reset(); }).join();
}

// The thread that made the graph counts its copies in the slot's home part
// (gc/root_count.h), without touching the shared part.
TEST(NodeHandle, CopiesOnTheGraphsThreadCountInTheHomePart) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = a;
  ReaderLock lock(g.heap().mu());
  const gc::Slot& s = g.heap().slot(a.id().index);
  EXPECT_EQ(s.strong_shared.load(), 0);
  EXPECT_EQ(s.strong_home.load(), 2);
}

TEST(NodeHandle, CopiesOnAnotherThreadCountInTheSharedPart) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b;
  std::thread([&] { b = a; }).join();
  EXPECT_EQ(StrongCount(g, a), 2);
  ReaderLock lock(g.heap().mu());
  EXPECT_EQ(g.heap().slot(a.id().index).strong_shared.load(), 1);
}

TEST(NodeHandle, AHandleCopiedAtHomeAndDroppedElsewhereLetsItsNodeGo) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = a;
  const int64_t drops = g.heap().drops();
  DropOnAnotherThread(std::move(b));
  EXPECT_EQ(StrongCount(g, a), 1);
  EXPECT_EQ(g.heap().drops(), drops);
  EXPECT_TRUE(g.heap().maybe_drop());  // it could not see that a still held it
  a.Reset();  // the last handle, at home: parts 1 (home) and -1 (shared)
  EXPECT_EQ(g.heap().drops(), drops + 1);
  EXPECT_EQ(g.Collect().swept, 1);
}

TEST(NodeHandle, ALabelledHandleDroppedOnAnotherThreadRemovesItsEntry) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  const size_t before = g.heap().label_table_size();
  NodeHandle labelled = a.WithOwner("model");
  DropOnAnotherThread(labelled);  // a copy
  EXPECT_GT(g.heap().label_table_size(), before);
  DropOnAnotherThread(std::move(labelled));
  EXPECT_EQ(g.heap().label_table_size(), before);
  EXPECT_EQ(StrongCount(g, a), 1);
  a.Reset();
  EXPECT_EQ(g.Collect().swept, 1);
}

// A removed label entry is reused by the next new label (gc/heap.h's
// SlotLabel). This one is removed with its home part at one and its shared
// part at minus one (copied at home, every handle dropped elsewhere): the
// reused entry must count its one new handle once, whatever its old parts.
TEST(NodeHandle, AReusedLabelEntryCountsOnlyItsNewHandle) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  const size_t before = g.heap().label_table_size();
  NodeHandle old_label = a.WithOwner("old model");
  DropOnAnotherThread(old_label);  // a copy made here: home part one
  DropOnAnotherThread(std::move(old_label));
  ASSERT_EQ(g.heap().label_table_size(), before);
  NodeHandle new_label = a.WithOwner("new model");
  std::vector<std::pair<std::string, int32_t>> labels;
  {
    ReaderLock lock(g.heap().mu());
    labels = g.heap().RootLabels(a.id().index);
  }
  EXPECT_EQ(labels,
            (std::vector<std::pair<std::string, int32_t>>{
                {"new model", 1}, {std::string(gc::kUnlabelledRoot), 1}}));
  new_label.Reset();
  EXPECT_EQ(g.heap().label_table_size(), before);
  EXPECT_EQ(StrongCount(g, a), 1);
  a.Reset();
  EXPECT_EQ(g.Collect().swept, 1);
}

// Two threads, the graph's home thread and another, drop the last two
// handles of one owner label at once, round after round: a drop reads the
// count's other part after decrementing its own, when the other thread's
// drop may already have seen zero and removed the entry. Entries are never
// freed while the heap lives (gc/heap.h), so that read is of an entry, and
// the entry goes exactly once. When removal freed them, the TSan stage
// reported a use-after-free here in every run (ASan's runs missed its
// window).
TEST(NodeHandle, RacingLastDropsOfALabelRemoveItsEntryOnce) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  const size_t before = g.heap().label_table_size();
  constexpr int kRounds = 2000;
  NodeHandle theirs;
  std::barrier sync(2);
  std::thread other([&] {
    for (int i = 0; i < kRounds; ++i) {
      sync.arrive_and_wait();  // `theirs` is this round's copy
      theirs.Reset();
      sync.arrive_and_wait();  // both dropped
    }
  });
  int entries_left = 0;
  for (int i = 0; i < kRounds; ++i) {
    NodeHandle mine = a.WithOwner("model");
    theirs = mine;
    sync.arrive_and_wait();
    mine.Reset();
    sync.arrive_and_wait();
    if (g.heap().label_table_size() != before) ++entries_left;
  }
  other.join();
  EXPECT_EQ(entries_left, 0);
  EXPECT_EQ(StrongCount(g, a), 1);
}

// A collector on another thread reads the home thread's counts while it
// stores them: a node the home thread holds throughout must survive every
// collection, however its copies come and go meanwhile.
TEST(NodeHandle, ANodeHeldAtHomeSurvivesCollectionsElsewhere) {
  Graph g;
  NodeHandle held = AddTestNode(g, "held");
  NodeHandle labelled = held.WithOwner("model");
  const WeakNodeHandle weak(held);
  std::atomic<bool> done{false};
  int lost = 0;
  std::thread collector([&] {
    for (int i = 0; i < 300; ++i) {
      g.Collect();
      if (!weak.Lock().has_value()) ++lost;
    }
    done.store(true);
  });
  while (!done.load()) {
    NodeHandle copy = held;
    NodeHandle labelled_copy = labelled;
    copy.Reset();
    labelled_copy.Reset();
  }
  collector.join();
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(StrongCount(g, held), 2);  // `held` and the label's entry
}

TEST(NodeHandle, ThreadsCopyAndDropHandlesWhileAnotherCollects) {
  Graph g;
  NodeHandle shared = AddTestNode(g, "shared");
  std::atomic<bool> stop{false};
  std::thread collector([&] {
    while (!stop.load()) g.Collect();
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        NodeHandle mine = AddTestNode(g, "w" + std::to_string(t), {shared});
        NodeHandle copy = mine;
        WeakNodeHandle weak(copy);
        if (auto locked = weak.Lock()) {
          EXPECT_EQ(*locked, mine);
        }
        NodeHandle labelled = shared.WithOwner("worker");
      }
    });
  }
  for (auto& w : workers) w.join();
  stop.store(true);
  collector.join();
  g.Collect();
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(StrongCount(g, shared), 1);
}

}  // namespace
}  // namespace graphgc
