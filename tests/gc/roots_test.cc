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
    gc::PinScope pin = g.PinForTesting({id}).value();
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
  absl::StatusOr<gc::PinScope> pin = g.PinForTesting({id});
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

TEST(Roots, HoldersTextCountsHandlesPerLabel) {
  gc::RetentionPath path;
  path.holders = {{"Sequential 's'", 1}, {"TensorBoard 'logs'", 3}};
  EXPECT_EQ(gc::HoldersText(path),
            "Sequential 's', TensorBoard 'logs' (3 handles)");
}

std::vector<gc::OwnerUsage> Usage(const Graph& g) {
  ReaderLock l(g.heap().mu());
  return gc::UsageByOwner(g.heap());
}

TEST(Roots, UsageByOwnerCountsANodeForTheFirstOwnerInLabelOrder) {
  Graph g;
  NodeHandle shared = AddTestNode(g, "shared");
  NodeHandle b = AddTestNode(g, "b", {shared}).WithOwner("B");
  NodeHandle a = AddTestNode(g, "a", {shared}).WithOwner("A");
  shared.Reset();
  std::vector<gc::OwnerUsage> usage = Usage(g);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].owner, "A");
  EXPECT_EQ(usage[0].nodes, 2);  // a and shared
  EXPECT_EQ(usage[1].owner, "B");
  EXPECT_EQ(usage[1].nodes, 1);
}

TEST(Roots, UsageByOwnerSortsLargestFirst) {
  Graph g;
  NodeHandle small = AddTestNode(g, "small").WithOwner("A");
  NodeHandle big =
      AddTestNode(g, "big", {AddTestNode(g, "in1"), AddTestNode(g, "in2")})
          .WithOwner("Z");
  std::vector<gc::OwnerUsage> usage = Usage(g);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].owner, "Z");
  EXPECT_EQ(usage[0].nodes, 3);
  EXPECT_EQ(usage[1].owner, "A");
}

TEST(Roots, UsageByOwnerPutsUnlabelledRootsUnderTheirOwnLabel) {
  Graph g;
  NodeHandle plain = AddTestNode(g, "plain");
  std::vector<gc::OwnerUsage> usage = Usage(g);
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].owner, gc::kUnlabelledRoot);
  EXPECT_EQ(usage[0].nodes, 1);
}

TEST(Roots, UsageByOwnerCountsUnreachableLiveNodesLast) {
  Graph g;
  NodeHandle kept = AddTestNode(g, "kept", {AddTestNode(g, "kept_in")})
                        .WithOwner("Sequential 'm'");
  AddTestNode(g, "garbage");
  std::vector<gc::OwnerUsage> usage = Usage(g);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[1].owner, gc::kUnreachableOwner);
  EXPECT_EQ(usage[1].nodes, 1);
  EXPECT_EQ(usage[1].bytes, 0);
}

TEST(Roots, UsageByOwnerIsEmptyForAnEmptyHeap) {
  Graph g;
  EXPECT_TRUE(Usage(g).empty());
}

}  // namespace
}  // namespace graphgc
