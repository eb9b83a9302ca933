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
