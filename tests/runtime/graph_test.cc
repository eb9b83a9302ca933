#include "runtime/graph.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/gc/test_graph.h"

namespace graphgc {
namespace {

using testing::AddTestNode;

TEST(Graph, DefaultIsOneProcessWideGraph) {
  EXPECT_EQ(&Graph::Default(), &Graph::Default());
}

TEST(GraphNames, TakenNamesGetTensorFlowStyleSuffixes) {
  Graph g;
  NodeHandle a = AddTestNode(g, "dense/MatMul");
  NodeHandle b = AddTestNode(g, "dense/MatMul");
  NodeHandle c = AddTestNode(g, "dense/MatMul");
  EXPECT_EQ(g.Describe(a)->name, "dense/MatMul");
  EXPECT_EQ(g.Describe(b)->name, "dense/MatMul_1");
  EXPECT_EQ(g.Describe(c)->name, "dense/MatMul_2");
}

TEST(GraphNames, EmptyNameMeansTheOpType) {
  Graph g;
  NodeSpec spec{.op = "NoOp"};
  NodeHandle h = g.AddNode(spec).value();
  EXPECT_EQ(g.Describe(h)->name, "NoOp");
}

TEST(GraphNames, NamesAreReusableAfterASweep) {
  Graph g;
  AddTestNode(g, "x");
  AddTestNode(g, "x");
  g.Collect();
  NodeHandle again = AddTestNode(g, "x");
  EXPECT_EQ(g.Describe(again)->name, "x");
}

TEST(GraphNames, SweepingPartOfAScopeKeepsTheRestOfIt) {
  Graph g;
  NodeHandle keep = AddTestNode(g, "scope/keep");
  AddTestNode(g, "scope/x");
  AddTestNode(g, "scope/x");  // scope/x_1
  EXPECT_EQ(g.Collect().swept, 2);
  EXPECT_TRUE(g.FindNode("scope/keep").has_value());
  EXPECT_FALSE(g.FindNode("scope/x").has_value());
  EXPECT_TRUE(g.IsScopeInUse("scope"));
  EXPECT_EQ(g.Describe(AddTestNode(g, "scope/x"))->name, "scope/x");
  EXPECT_EQ(g.Describe(AddTestNode(g, "scope/keep"))->name, "scope/keep_1");
}

TEST(GraphScopes, ANestedScopeIsInUseWhileANodeUnderItLives) {
  Graph g;
  {
    NodeHandle c = AddTestNode(g, "a/b/c");
    EXPECT_TRUE(g.IsScopeInUse("a/b"));
    EXPECT_TRUE(g.IsScopeInUse("a/b/c"));
    EXPECT_FALSE(g.IsScopeInUse("a/bc"));
    EXPECT_FALSE(g.IsScopeInUse("b"));
  }
  g.Collect();
  EXPECT_FALSE(g.IsScopeInUse("a/b"));
  EXPECT_FALSE(g.IsScopeInUse("a"));
}

TEST(GraphLiveness, AllLiveIsFalseOnceAnyIdIsSweptEvenIfItsSlotIsReused) {
  Graph g;
  NodeHandle kept = AddTestNode(g, "kept");
  NodeId gone_id;
  {
    NodeHandle gone = AddTestNode(g, "gone");
    gone_id = gone.id();
    EXPECT_TRUE(g.AllLive({kept.id(), gone_id}));
  }
  g.Collect();
  NodeHandle reuse = AddTestNode(g, "reuse");  // may take the freed slot
  EXPECT_TRUE(g.AllLive({kept.id(), reuse.id()}));
  EXPECT_FALSE(g.AllLive({kept.id(), gone_id}));
  EXPECT_TRUE(g.AllLive({}));
}

TEST(GraphNames, NeverCollideWithLiveNames) {
  Graph g;
  NodeHandle x = AddTestNode(g, "x");
  NodeHandle x1 = AddTestNode(g, "x_1");  // explicit, takes the next suffix
  NodeHandle next = AddTestNode(g, "x");
  EXPECT_EQ(g.Describe(next)->name, "x_2");
  x.Reset();
  g.Collect();
  NodeHandle reused = AddTestNode(g, "x");
  EXPECT_EQ(g.Describe(reused)->name, "x");
  NodeHandle another = AddTestNode(g, "x");
  EXPECT_NE(g.Describe(another)->name, "x_1");
  EXPECT_NE(g.Describe(another)->name, "x_2");
}

TEST(GraphNames, InvalidNamesAreRejected) {
  Graph g;
  for (std::string bad : {"_x", "a//b", "a/", "a b", "-x"}) {
    NodeSpec spec{.op = "NoOp", .name = bad};
    absl::StatusOr<NodeHandle> h = g.AddNode(spec);
    EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(g.num_nodes(), 0);
}

TEST(GraphScopes, UniqueScopeSkipsScopesInUse) {
  Graph g;
  EXPECT_EQ(g.UniqueScope("dense"), "dense");
  NodeHandle k = AddTestNode(g, "dense/kernel");
  EXPECT_TRUE(g.IsScopeInUse("dense"));
  EXPECT_EQ(g.UniqueScope("dense"), "dense_1");
  k.Reset();
  g.Collect();
  EXPECT_EQ(g.UniqueScope("dense"), "dense");
}

TEST(GraphBuild, FailedAddNodeLeavesGraphUnchanged) {
  Graph g;
  Graph other;
  NodeHandle mine = AddTestNode(g, "mine");
  NodeHandle foreign = AddTestNode(other, "foreign");
  NodeSpec spec{.op = "Test",
                .name = "bad",
                .inputs = {Output(mine, 0), Output(foreign, 0)},
                .output_types = {DT_FLOAT},
                .output_shapes = {TensorShape{}}};
  absl::StatusOr<NodeHandle> h = g.AddNode(spec);
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("another graph"), std::string::npos);
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_FALSE(g.FindNode("bad").has_value());
}

TEST(GraphBuild, ReadingAMissingOutputIsAnError) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeSpec spec{.op = "Test", .inputs = {Output(a, 3)}};
  absl::StatusOr<NodeHandle> h = g.AddNode(spec);
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.num_nodes(), 1);
}

TEST(GraphBuild, EmptyInputHandleIsAnError) {
  Graph g;
  NodeSpec spec{.op = "Test", .inputs = {Output()}};
  EXPECT_FALSE(g.AddNode(spec).ok());
  EXPECT_EQ(g.num_nodes(), 0);
}

TEST(GraphRetention, ExplainRetentionNamesTheOwnerAndTheChain) {
  Graph g;
  NodeHandle kernel = AddTestNode(g, "dense/kernel");
  NodeHandle matmul = AddTestNode(g, "dense/MatMul", {kernel});
  NodeHandle train = AddTestNode(g, "train_op", {matmul})
                         .WithOwner("Sequential 'sequential_3'");
  kernel.Reset();
  matmul.Reset();
  std::vector<std::string> chain = g.ExplainRetention("dense/kernel").value();
  EXPECT_EQ(chain,
            (std::vector<std::string>{"Sequential 'sequential_3'", "train_op",
                                      "dense/MatMul", "dense/kernel"}));
}

TEST(GraphRetention, ExplainRetentionOfGarbageSaysItIsUnreachable) {
  Graph g;
  AddTestNode(g, "lost");
  EXPECT_EQ(g.ExplainRetention("lost").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g.ExplainRetention("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(GraphRetention, LeakReportGroupsLiveNodesByOwner) {
  Graph g;
  NodeHandle m =
      AddTestNode(g, "m", {AddTestNode(g, "m_in")}).WithOwner("Sequential 'm'");
  NodeHandle cb = AddTestNode(g, "cb").WithOwner("TensorBoard 'logs'");
  AddTestNode(g, "garbage");
  std::vector<OwnerUsage> report = g.LeakReport();
  ASSERT_EQ(report.size(), 3u);
  EXPECT_EQ(report[0].owner, "Sequential 'm'");
  EXPECT_EQ(report[0].nodes, 2);
  EXPECT_GT(report[0].bytes, 0);
  EXPECT_EQ(report[1].owner, "TensorBoard 'logs'");
  EXPECT_EQ(report[2].owner, "(unreachable, awaiting collection)");
}

TEST(GraphReachability, ReachableFromListsInputsBeforeConsumers) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a});
  NodeHandle c = AddTestNode(g, "c", {a, b});
  AddTestNode(g, "unrelated");
  std::vector<NodeHandle> order = g.ReachableFrom({c}).value();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], a);
  EXPECT_EQ(order[1], b);
  EXPECT_EQ(order[2], c);
}

TEST(GraphBookkeeping, StaysBoundedOverManyBuildAndDropCycles) {
  Graph g;
  NodeHandle keep = AddTestNode(g, "keep");
  g.Collect();
  const size_t names_before = g.NameTableSizeForTesting();
  uint32_t slots_after_first = 0;
  for (int cycle = 0; cycle < 100000; ++cycle) {
    NodeHandle a = AddTestNode(g, "cycle/a", {keep});
    NodeHandle b = AddTestNode(g, "cycle/b", {a}).WithOwner("cycle owner");
    a.Reset();
    b.Reset();
    if (cycle % 100 == 99) g.Collect();
    if (cycle == 99) {
      ReaderLock l(g.heap().mu());
      slots_after_first = g.heap().num_slots();
    }
  }
  g.Collect();
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.NameTableSizeForTesting(), names_before);
  ReaderLock l(g.heap().mu());
  EXPECT_EQ(g.heap().num_slots(), slots_after_first);
}

}  // namespace
}  // namespace graphgc

namespace graphgc {
namespace {

TEST(GraphScopes, ReservedScopesAreNotHandedOutTwice) {
  for (std::string base : {"dense", "outer/dense"}) {  // top-level, nested
    Graph g;
    ScopeReservation a = g.ReserveScope(base);
    ScopeReservation b = g.ReserveScope(base);
    EXPECT_EQ(a.name(), base);
    EXPECT_EQ(b.name(), base + "_1");
    EXPECT_TRUE(g.IsScopeInUse(base));
  }
}

TEST(GraphScopes, ReleasedScopesAreFreeAgain) {
  Graph g;
  { ScopeReservation a = g.ReserveScope("dense"); }
  EXPECT_FALSE(g.IsScopeInUse("dense"));
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense");
}

TEST(GraphScopes, AScopeStaysInUseWhileItsNodesLive) {
  Graph g;
  NodeHandle kernel;
  {
    ScopeReservation a = g.ReserveScope("dense");
    kernel = testing::AddTestNode(g, a.name() + "/kernel");
  }
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense_1");
}

TEST(GraphRollback, RemovesJustCreatedUnheldNodesAndNothingElse) {
  Graph g;
  NodeHandle kept = AddTestNode(g, "kept");
  AddTestNode(g, "unrelated_garbage");  // dropped at once, not collected
  NodeHandle a = AddTestNode(g, "a", {kept});
  NodeHandle b = AddTestNode(g, "b", {a});
  std::vector<NodeId> ids = {a.id(), b.id()};
  a.Reset();
  b.Reset();
  ASSERT_EQ(g.num_nodes(), 4);
  ASSERT_TRUE(g.RemoveUnreachableForRollback(ids).ok());
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_FALSE(g.FindNode("a").has_value());
  EXPECT_FALSE(g.FindNode("b").has_value());
  EXPECT_TRUE(g.FindNode("unrelated_garbage").has_value());
  EXPECT_EQ(g.Describe(AddTestNode(g, "a"))->name, "a");  // name free again
}

TEST(GraphRollback, RefusesANodeStillHeldByAHandle) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a});
  std::vector<NodeId> ids = {a.id(), b.id()};
  a.Reset();
  absl::Status s = g.RemoveUnreachableForRollback(ids);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(g.num_nodes(), 2);
}

TEST(GraphRollback, RefusesANodeReadByANodeOutsideTheSet) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle reader = AddTestNode(g, "reader", {}, {a});
  std::vector<NodeId> ids = {a.id()};
  a.Reset();
  absl::Status s = g.RemoveUnreachableForRollback(ids);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("reader"), std::string::npos) << s;
  EXPECT_EQ(g.num_nodes(), 2);
}

}  // namespace
}  // namespace graphgc

namespace graphgc {
namespace {

TEST(GraphScopes, ReserveScopeHandsOutSuffixesInOrder) {
  Graph g;
  std::vector<ScopeReservation> held;
  for (int i = 0; i < 1000; ++i) {
    held.push_back(g.ReserveScope("dense"));
    EXPECT_EQ(held.back().name(),
              i == 0 ? "dense" : "dense_" + std::to_string(i));
  }
}

TEST(GraphScopes, ReleasedSuffixesAreReusedSmallestFirst) {
  Graph g;
  std::vector<ScopeReservation> held;
  for (int i = 0; i < 10; ++i) held.push_back(g.ReserveScope("dense"));
  held[7] = ScopeReservation();  // releases dense_7
  held[3] = ScopeReservation();  // releases dense_3
  held[0] = ScopeReservation();  // releases dense
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense");
  ScopeReservation a = g.ReserveScope("dense");
  ScopeReservation b = g.ReserveScope("dense");
  ScopeReservation c = g.ReserveScope("dense");
  ScopeReservation d = g.ReserveScope("dense");
  EXPECT_EQ(a.name(), "dense");
  EXPECT_EQ(b.name(), "dense_3");
  EXPECT_EQ(c.name(), "dense_7");
  EXPECT_EQ(d.name(), "dense_10");
}

TEST(GraphScopes, AScopeFreedByACollectionIsReusedAfterIt) {
  Graph g;
  ScopeReservation first = g.ReserveScope("dense");
  NodeHandle kernel;
  {
    ScopeReservation second = g.ReserveScope("dense");
    ASSERT_EQ(second.name(), "dense_1");
    kernel = AddTestNode(g, "dense_1/kernel");
  }
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense_2");  // a node still in it
  kernel.Reset();
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense_2");  // not collected yet
  g.Collect();
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense_1");
}

TEST(GraphScopes, ASuffixTakenByANodeAfterItWasFreedIsSkipped) {
  Graph g;
  ScopeReservation a = g.ReserveScope("dense");
  ScopeReservation b = g.ReserveScope("dense");
  ScopeReservation c = g.ReserveScope("dense");
  b = ScopeReservation();                             // dense_1 is free...
  NodeHandle squatter = AddTestNode(g, "dense_1/x");  // ...and taken again
  EXPECT_EQ(g.UniqueScope("dense"), "dense_3");
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense_3");
}

TEST(GraphScopes, AnUnscopedNodeNamedLikeAScopeHoldsItUntilSwept) {
  Graph g;
  ScopeReservation a = g.ReserveScope("dense");
  NodeHandle node = AddTestNode(g, "dense_1");
  ScopeReservation b = g.ReserveScope("dense");
  EXPECT_EQ(b.name(), "dense_2");
  node.Reset();
  g.Collect();
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense_1");
}

TEST(GraphScopes, UniqueScopeReservesNothing) {
  Graph g;
  ScopeReservation a = g.ReserveScope("dense");
  EXPECT_EQ(g.UniqueScope("dense"), "dense_1");
  EXPECT_EQ(g.UniqueScope("dense"), "dense_1");
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense_1");
}

TEST(GraphScopes, ScopeBookkeepingIsGoneOnceEveryScopeIsFree) {
  Graph g;
  const size_t before = g.NameTableSizeForTesting();
  {
    std::vector<ScopeReservation> held;
    std::vector<NodeHandle> nodes;
    for (int i = 0; i < 100; ++i) {
      held.push_back(g.ReserveScope("dense"));
      nodes.push_back(AddTestNode(g, held.back().name() + "/kernel"));
    }
    for (int i = 0; i < 100; i += 2) held[i] = ScopeReservation();
  }
  g.Collect();
  EXPECT_EQ(g.NameTableSizeForTesting(), before);
  EXPECT_EQ(g.ReserveScope("dense").name(), "dense");
}

// What a graph hands out may outlive it, to be destroyed (see graph.h).

TEST(GraphLifetime, AScopeReservationMayBeDroppedAfterItsGraph) {
  auto g = std::make_unique<Graph>();
  ScopeReservation scope = g->ReserveScope("dense");
  ScopeReservation moved = g->ReserveScope("dense");
  g.reset();
  scope = std::move(moved);  // releases the first, harmlessly
}

TEST(GraphLifetime, HandlesMayBeDroppedAfterTheirGraph) {
  auto g = std::make_unique<Graph>();
  NodeHandle a = AddTestNode(*g, "a");
  NodeHandle b = AddTestNode(*g, "b", {a}).WithOwner("test owner");
  WeakNodeHandle weak(b);
  Output out(b, 0);
  g.reset();
  EXPECT_EQ(a.graph(), nullptr);
  EXPECT_FALSE(weak.Lock().has_value());
  NodeHandle copy = b;
  EXPECT_EQ(copy.owner(), "test owner");
  a.Reset();
  b.Reset();
}

TEST(GraphLifetime, AListenerRegistrationMayBeDroppedAfterItsGraph) {
  auto g = std::make_unique<Graph>();
  CollectListenerRegistration r =
      g->RegistrationFor(g->AddCollectListener([](const CollectEvent&) {}));
  g.reset();
  r.Reset();
}

TEST(GraphLifetime, AListenerRegistrationRemovesItsListener) {
  Graph g;
  int calls = 0;
  {
    CollectListenerRegistration r = g.RegistrationFor(
        g.AddCollectListener([&](const CollectEvent&) { ++calls; }));
    g.Collect();
  }
  g.Collect();
  EXPECT_EQ(calls, 2);  // start and end of the first collection only
}

}  // namespace
}  // namespace graphgc
