#include "gc/roots.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "tests/gc/test_graph.h"

namespace graphgc {
namespace {

using testing::AddTestNode;

std::vector<uint32_t> Roots(const Graph& g) {
  std::vector<uint32_t> roots;
  ReaderLock l(g.heap().mu());
  gc::CollectRoots(g.heap(), roots);
  std::sort(roots.begin(), roots.end());
  return roots;
}

TEST(Roots, HandlesMakeRoots) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a});
  a.Reset();
  EXPECT_EQ(Roots(g), std::vector<uint32_t>{b.id().index});
}

TEST(Roots, PinsMakeRootsUntilReleased) {
  Graph g;
  NodeId id = AddTestNode(g, "a").id();
  {
    gc::PinScope pin = g.Pin({id}).value();
    EXPECT_EQ(Roots(g), std::vector<uint32_t>{id.index});
    EXPECT_EQ(g.Collect().swept, 0);
  }
  EXPECT_TRUE(Roots(g).empty());
  EXPECT_EQ(g.Collect().swept, 1);
}

TEST(Roots, PinningASweptNodeFails) {
  Graph g;
  NodeId id = AddTestNode(g, "a").id();
  g.Collect();
  absl::StatusOr<gc::PinScope> pin = g.Pin({id});
  EXPECT_EQ(pin.status().code(), absl::StatusCode::kNotFound);
}

TEST(Roots, RetentionPathRunsFromTheRootToTheNode) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a});
  NodeHandle c = AddTestNode(g, "c", {b}).WithOwner("Sequential 's'");
  const uint32_t target = a.id().index;
  a.Reset();
  b.Reset();
  ReaderLock l(g.heap().mu());
  auto path = gc::FindRetentionPath(g.heap(), target);
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->chain.size(), 3u);
  EXPECT_EQ(path->chain.front(), c.id().index);
  EXPECT_EQ(path->chain.back(), target);
  ASSERT_EQ(path->holders.size(), 1u);
  EXPECT_EQ(path->holders[0].first, "Sequential 's'");
}

TEST(Roots, NoRetentionPathForGarbage) {
  Graph g;
  const uint32_t target = AddTestNode(g, "a").id().index;
  ReaderLock l(g.heap().mu());
  EXPECT_FALSE(gc::FindRetentionPath(g.heap(), target).has_value());
}

}  // namespace
}  // namespace graphgc
