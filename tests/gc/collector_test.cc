#include "gc/collector.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gc/handle.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "tests/gc/test_graph.h"

namespace graphgc {
namespace {

using testing::AddTestNode;

class CollectorTest : public ::testing::Test {
 protected:
  Graph g_;
};

TEST_F(CollectorTest, KeepsNodeHeldByHandle) {
  NodeHandle a = AddTestNode(g_, "a");
  CollectStats s = g_.Collect();
  EXPECT_EQ(s.marked, 1);
  EXPECT_EQ(s.swept, 0);
  EXPECT_EQ(g_.num_nodes(), 1);
}

TEST_F(CollectorTest, SweepsUnreachableNode) {
  { NodeHandle a = AddTestNode(g_, "a"); }
  CollectStats s = g_.Collect();
  EXPECT_EQ(s.swept, 1);
  EXPECT_EQ(g_.num_nodes(), 0);
  EXPECT_FALSE(g_.FindNode("a").has_value());
}

TEST_F(CollectorTest, KeepsInputsOfAReachableNode) {
  NodeHandle b;
  {
    NodeHandle a = AddTestNode(g_, "a");
    b = AddTestNode(g_, "b", {a});
  }
  EXPECT_EQ(g_.Collect().swept, 0);
  EXPECT_EQ(g_.num_nodes(), 2);
}

TEST_F(CollectorTest, SweepsConsumersNoHandleReaches) {
  NodeHandle a = AddTestNode(g_, "a");
  { NodeHandle b = AddTestNode(g_, "b", {a}); }
  EXPECT_EQ(g_.Collect().swept, 1);
  EXPECT_TRUE(g_.FindNode("a").has_value());
  EXPECT_FALSE(g_.FindNode("b").has_value());
}

TEST_F(CollectorTest, KeepsNodesReachedThroughControlInputs) {
  NodeHandle b;
  {
    NodeHandle a = AddTestNode(g_, "a");
    b = AddTestNode(g_, "b", {}, {a});
  }
  EXPECT_EQ(g_.Collect().swept, 0);
  EXPECT_TRUE(g_.FindNode("a").has_value());
}

TEST_F(CollectorTest, CollectsGarbageCycles) {
  {
    NodeHandle a = AddTestNode(g_, "a");
    NodeHandle b = AddTestNode(g_, "b", {a});
    ASSERT_TRUE(g_.AddControlEdge(b, a).ok());  // a waits for b: a cycle
  }
  EXPECT_EQ(g_.Collect().swept, 2);
  EXPECT_EQ(g_.num_nodes(), 0);
}

TEST_F(CollectorTest, KeepsCyclesAHandleReaches) {
  NodeHandle a = AddTestNode(g_, "a");
  {
    NodeHandle b = AddTestNode(g_, "b", {a});
    ASSERT_TRUE(g_.AddControlEdge(b, a).ok());
  }
  EXPECT_EQ(g_.Collect().swept, 0);
}

TEST_F(CollectorTest, MarksAMillionNodeChainWithoutRecursion) {
  constexpr int kLength = 1000000;
  NodeHandle tail = AddTestNode(g_, "n");
  for (int i = 1; i < kLength; ++i) tail = AddTestNode(g_, "n", {tail});
  CollectStats kept = g_.Collect();
  EXPECT_EQ(kept.marked, kLength);
  EXPECT_EQ(kept.swept, 0);
  tail.Reset();
  CollectStats swept = g_.Collect();
  EXPECT_EQ(swept.swept, kLength);
  EXPECT_EQ(g_.num_nodes(), 0);
}

}  // namespace
}  // namespace graphgc

namespace graphgc {
namespace {

using testing::AddTestNode;

TEST(CollectorPolicy, MaybeCollectDoesNothingWhenNoRootWasDropped) {
  Graph g;
  g.set_gc_policy({.automatic = true, .min_new_nodes = 1});
  std::vector<NodeHandle> held;
  for (int i = 0; i < 100; ++i) held.push_back(AddTestNode(g, "n"));
  EXPECT_FALSE(g.MaybeCollect().has_value());
  EXPECT_EQ(g.gc_stats().collections, 0);
}

TEST(CollectorPolicy, MaybeCollectCollectsOnceEnoughGarbageCouldExist) {
  Graph g;
  g.set_gc_policy({.automatic = true, .growth_ratio = 1.0, .min_new_nodes = 10});
  for (int i = 0; i < 9; ++i) AddTestNode(g, "n");
  EXPECT_FALSE(g.MaybeCollect().has_value());  // 9 < 10 new nodes
  AddTestNode(g, "n");
  std::optional<CollectStats> s = g.MaybeCollect();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->swept, 10);
}

TEST(CollectorPolicy, ThresholdGrowsWithTheLiveGraph) {
  Graph g;
  g.set_gc_policy({.automatic = true, .growth_ratio = 1.0, .min_new_nodes = 1});
  std::vector<NodeHandle> live;
  for (int i = 0; i < 50; ++i) live.push_back(AddTestNode(g, "live"));
  g.Collect();  // 50 live: the next automatic collection waits for 50 more
  for (int i = 0; i < 49; ++i) AddTestNode(g, "garbage");
  EXPECT_FALSE(g.MaybeCollect().has_value());
  AddTestNode(g, "garbage");
  EXPECT_TRUE(g.MaybeCollect().has_value());
}

TEST(CollectorPolicy, AutomaticOffLeavesGarbageForExplicitCollect) {
  Graph g;
  g.set_gc_policy({.automatic = false, .min_new_nodes = 1});
  for (int i = 0; i < 10; ++i) AddTestNode(g, "n");
  EXPECT_FALSE(g.MaybeCollect().has_value());
  EXPECT_EQ(g.num_nodes(), 10);
  EXPECT_EQ(g.Collect().swept, 10);
}

TEST(CollectorStats, AccumulateOverCollections) {
  Graph g;
  for (int i = 0; i < 3; ++i) AddTestNode(g, "n");
  g.Collect();
  NodeHandle keep = AddTestNode(g, "k");
  AddTestNode(g, "n");
  g.Collect();
  GcStats s = g.gc_stats();
  EXPECT_EQ(s.collections, 2);
  EXPECT_EQ(s.swept_total, 4);
  EXPECT_EQ(s.live_nodes, 1);
  EXPECT_EQ(s.peak_nodes, 3);
  EXPECT_GE(s.pause_ns_total, s.last_pause_ns);
}

TEST(CollectorListeners, SeeStartAndEndWithTheSweptIds) {
  Graph g;
  NodeId dead = AddTestNode(g, "a").id();
  std::vector<CollectEvent::Phase> phases;
  std::vector<NodeId> swept;
  int id = g.AddCollectListener([&](const CollectEvent& e) {
    phases.push_back(e.phase);
    if (e.phase == CollectEvent::Phase::kEnd) swept = e.swept;
  });
  g.Collect();
  g.RemoveCollectListener(id);
  g.Collect();
  EXPECT_EQ(phases, (std::vector<CollectEvent::Phase>{
                        CollectEvent::Phase::kStart, CollectEvent::Phase::kEnd}));
  EXPECT_EQ(swept, std::vector<NodeId>{dead});
}

TEST(CollectorListeners, CollectDuringCallbackIsDeferred) {
  Graph g;
  int nested_swept = -1;
  int id = g.AddCollectListener([&](const CollectEvent& e) {
    if (e.phase == CollectEvent::Phase::kEnd && nested_swept < 0) {
      nested_swept = static_cast<int>(g.Collect().swept);
    }
  });
  AddTestNode(g, "a");
  g.Collect();
  g.RemoveCollectListener(id);
  EXPECT_EQ(nested_swept, 0);
  EXPECT_EQ(g.gc_stats().collections, 1);
  // The deferred request is honoured at the next safe point.
  AddTestNode(g, "b");
  ASSERT_TRUE(g.MaybeCollect().has_value());
  EXPECT_EQ(g.gc_stats().collections, 2);
}

TEST(CollectorDebug, SaveGarbageKeepsSweptNodesForInspection) {
  Graph g;
  g.set_gc_policy({.save_garbage = true});
  AddTestNode(g, "lost");
  EXPECT_EQ(g.Collect().swept, 1);
  EXPECT_EQ(g.num_nodes(), 0);
  EXPECT_FALSE(g.FindNode("lost").has_value());
  EXPECT_EQ(g.SavedGarbage(), std::vector<std::string>{"lost (Test)"});
  g.ClearSavedGarbage();
  EXPECT_TRUE(g.SavedGarbage().empty());
}

TEST(CollectorConcurrency, BuildersAndACollectorShareTheGraph) {
  Graph g;
  NodeHandle keep = AddTestNode(g, "keep");
  std::atomic<bool> stop{false};
  std::thread collector([&] {
    while (!stop.load()) g.Collect();
  });
  std::vector<std::thread> builders;
  for (int t = 0; t < 3; ++t) {
    builders.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        NodeHandle chain = AddTestNode(g, "b" + std::to_string(t), {keep});
        for (int i = 0; i < 10; ++i) chain = AddTestNode(g, "b", {chain});
        EXPECT_TRUE(g.FindNode("keep").has_value());
      }
    });
  }
  for (auto& b : builders) b.join();
  stop.store(true);
  collector.join();
  g.Collect();
  EXPECT_EQ(g.num_nodes(), 1);
}

}  // namespace
}  // namespace graphgc
