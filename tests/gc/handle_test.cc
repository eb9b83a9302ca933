#include "gc/handle.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "tests/gc/test_graph.h"

namespace graphgc {
namespace {

using testing::AddTestNode;

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
  EXPECT_EQ(g.heap().strong_count(a.id().index), 2);
  b.Reset();
  EXPECT_EQ(g.heap().strong_count(a.id().index), 1);
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
  EXPECT_EQ(g.heap().strong_count(b.id().index), 1);
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
  auto labels = g.heap().RootLabels(a.id().index);
  ASSERT_EQ(labels.size(), 1u);
  EXPECT_EQ(labels[0].first, "Sequential 'm'");
  EXPECT_EQ(labels[0].second, 2);
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
  ASSERT_EQ(b.id().index, slot);  // the slot was reused...
  EXPECT_FALSE(weak.Lock().has_value());  // ...but the generation differs
}

TEST(WeakNodeHandle, EmptyWeakHandleLocksToNothing) {
  WeakNodeHandle weak;
  EXPECT_FALSE(weak.Lock().has_value());
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
  EXPECT_EQ(g.heap().strong_count(shared.id().index), 1);
}

}  // namespace
}  // namespace graphgc
