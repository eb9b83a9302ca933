#include "runtime/graph.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
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

TEST(GraphNames, SuffixesGoOnFromTheLastWhileTheBaseItselfLives) {
  Graph g;
  NodeHandle x = AddTestNode(g, "x");
  AddTestNode(g, "x");  // x_1
  AddTestNode(g, "x");  // x_2
  EXPECT_EQ(g.Collect().swept, 2);
  // As TensorFlow's counter does while "x" lives: no suffix handed out
  // before is given again, though x_1 and x_2 are free.
  EXPECT_EQ(g.Describe(AddTestNode(g, "x"))->name, "x_3");
}

TEST(GraphNames, SuffixesStartOverOnceEveryNodeOfTheBaseIsSwept) {
  Graph g;
  NodeHandle other = AddTestNode(g, "y");
  AddTestNode(g, "x");
  AddTestNode(g, "x");  // x_1
  AddTestNode(g, "x");  // x_2
  EXPECT_EQ(g.Collect().swept, 3);
  NodeHandle again = AddTestNode(g, "x");
  EXPECT_EQ(g.Describe(again)->name, "x");
  EXPECT_EQ(g.Describe(AddTestNode(g, "x"))->name, "x_1");
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
    EXPECT_TRUE(g.AllLiveForTesting({kept.id(), gone_id}));
  }
  g.Collect();
  NodeHandle reuse = AddTestNode(g, "reuse");  // may take the freed slot
  EXPECT_TRUE(g.AllLiveForTesting({kept.id(), reuse.id()}));
  EXPECT_FALSE(g.AllLiveForTesting({kept.id(), gone_id}));
  EXPECT_TRUE(g.AllLiveForTesting({}));
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

// A caller adding many similar nodes reuses one spec: AddNode(const
// NodeSpec&) leaves it as it was, each node gets its own name and inputs,
// and equal attributes are shared, not copied per node.
TEST(GraphBuild, AConstSpecIsLeftAsItWasAndCanBeReused) {
  Graph g;
  NodeHandle in = AddTestNode(g, "in");
  NodeSpec spec{.op = "NoOp",
                .name = "layer/n",
                .inputs = {Output(in, 0)},
                .attrs = {{"T", DT_FLOAT}},
                .output_types = {DT_FLOAT},
                .output_shapes = {TensorShape{}}};
  const size_t records_before = g.NodeTraitsTableSizeForTesting();
  NodeHandle first = g.AddNode(spec).value();
  NodeHandle second = g.AddNode(spec).value();
  spec.name = "layer/other";
  spec.inputs = {Output(first, 0)};
  NodeHandle third = g.AddNode(spec).value();
  EXPECT_EQ(spec.op, "NoOp");
  EXPECT_EQ(spec.name, "layer/other");
  EXPECT_EQ(spec.attrs.size(), 1u);
  EXPECT_EQ(g.Describe(first)->name, "layer/n");
  EXPECT_EQ(g.Describe(second)->name, "layer/n_1");
  EXPECT_EQ(g.Describe(third)->name, "layer/other");
  EXPECT_EQ(g.Describe(third)->inputs.at(0).handle().id(), first.id());
  EXPECT_EQ(GetAttrOr<DataType>(g.Describe(third)->attrs, "T", DT_INVALID),
            DT_FLOAT);
  EXPECT_EQ(g.NodeTraitsTableSizeForTesting(), records_before + 1);
}

TEST(GraphNames, AConstSpecWithoutANameIsNamedForItsOpType) {
  Graph g;
  const NodeSpec spec{.op = "NoOp"};
  NodeHandle a = g.AddNode(spec).value();
  NodeHandle b = g.AddNode(spec).value();
  EXPECT_EQ(g.Describe(a)->name, "NoOp");
  EXPECT_EQ(g.Describe(b)->name, "NoOp_1");
  EXPECT_TRUE(spec.name.empty());
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

// Nodes of equal op, attributes and outputs share one record of them
// (runtime/node_traits.h); each still reads back exactly its own.
NodeHandle AddFloatAttrNode(Graph& g, const std::string& name, float alpha) {
  NodeSpec spec;
  spec.op = "NoOp";
  spec.name = name;
  spec.attrs["alpha"] = alpha;
  spec.attrs["T"] = DT_FLOAT;
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {TensorShape{-1, 4}};
  return g.AddNode(std::move(spec)).value();
}

TEST(GraphNodeTraits, NodesOfEqualAttributesReadBackTheirOwnValues) {
  Graph g;
  NodeHandle a = AddFloatAttrNode(g, "a", 0.0f);
  NodeHandle b = AddFloatAttrNode(g, "b", 0.0f);
  NodeHandle c = AddFloatAttrNode(g, "c", -0.0f);
  EXPECT_EQ(g.NodeTraitsTableSizeForTesting(), 2u);
  for (const NodeHandle& n : {a, b, c}) {
    NodeInfo info = g.Describe(n).value();
    EXPECT_EQ(info.op, "NoOp");
    EXPECT_EQ(GetAttrOr<DataType>(info.attrs, "T", DT_INVALID), DT_FLOAT);
    ASSERT_EQ(info.output_shapes.size(), 1u);
    EXPECT_EQ(info.output_shapes[0], (TensorShape{-1, 4}));
  }
  EXPECT_FALSE(std::signbit(
      GetAttrOr<float>(g.Describe(b).value().attrs, "alpha", 1.0f)));
  EXPECT_TRUE(std::signbit(
      GetAttrOr<float>(g.Describe(c).value().attrs, "alpha", 1.0f)));
}

// Fails only under the sanitizer stages (ASan/LSan, TSan): a record freed
// twice, used after its free, or leaked when the table goes first and the
// node after it.
TEST(GraphNodeTraits, ANodeOutlivingItsGraphFreesItsTraitsOnce) {
  auto g = std::make_unique<Graph>();
  NodeHandle a = AddFloatAttrNode(*g, "a", 0.5f);
  g.reset();  // the handle may only be destroyed now, and frees the node
  a.Reset();
}

TEST(GraphNodeTraits, TheTableStaysBoundedAsModelsComeAndGo) {
  Graph g;
  constexpr int kModel = 500;
  for (int model = 0; model < 20; ++model) {
    std::vector<NodeHandle> nodes;
    for (int i = 0; i < kModel; ++i) {
      nodes.push_back(
          AddFloatAttrNode(g, "m/n", static_cast<float>(model * kModel + i)));
    }
    nodes.clear();
    g.Collect();
  }
  // Each model's attributes are new; without pruning 10,000 records.
  EXPECT_LE(g.NodeTraitsTableSizeForTesting(), size_t{4 * kModel});
}

// The lazy-sweeping tests below keep one unscoped node alive, so that the
// swept nodes' name group ("", unscoped names) lives on and only nodes wait.
TEST(GraphLazySweeping, EachNodeAddedDestroysTwoSweptNodes) {
  Graph g;
  NodeHandle kept = AddFloatAttrNode(g, "kept", 1.0f);
  for (int i = 0; i < 5; ++i) AddFloatAttrNode(g, "dropped", 1.0f);
  EXPECT_EQ(g.Collect().swept, 5);
  EXPECT_EQ(g.heap().unreclaimed_count(), 5u);
  NodeHandle a = AddFloatAttrNode(g, "a", 1.0f);
  EXPECT_EQ(g.heap().unreclaimed_count(), 3u);
  NodeHandle b = AddFloatAttrNode(g, "b", 1.0f);
  EXPECT_EQ(g.heap().unreclaimed_count(), 1u);
  NodeHandle c = AddFloatAttrNode(g, "c", 1.0f);
  EXPECT_EQ(g.heap().unreclaimed_count(), 0u);
}

TEST(GraphLazySweeping, ABatchDestroysTwoSweptNodesPerNode) {
  Graph g;
  NodeHandle kept = AddFloatAttrNode(g, "kept", 1.0f);
  for (int i = 0; i < 7; ++i) AddFloatAttrNode(g, "dropped", 1.0f);
  g.Collect();
  std::vector<BatchNodeSpec> batch(3);
  for (BatchNodeSpec& spec : batch) spec.op = "NoOp";
  batch[0].name = "x";
  batch[1].name = "y";
  batch[2].name = "z";
  absl::StatusOr<std::vector<NodeHandle>> nodes = g.AddNodes(std::move(batch));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(g.heap().unreclaimed_count(), 1u);
}

// A node holding state (a variable's buffer) is destroyed by the collection
// that sweeps it, not left waiting.
TEST(GraphLazySweeping, ANodeWithAResourceIsDestroyedByItsCollection) {
  Graph g;
  NodeHandle kept = AddFloatAttrNode(g, "kept", 1.0f);
  auto resource = std::make_shared<NodeResource>();
  std::weak_ptr<NodeResource> watch = resource;
  NodeSpec spec{.op = "NoOp", .name = "v"};
  spec.resource = std::move(resource);
  ASSERT_TRUE(g.AddNode(std::move(spec)).ok());
  EXPECT_EQ(g.Collect().swept, 1);
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(g.heap().unreclaimed_count(), 0u);
}

// A dropped scope's name tables wait with its nodes, and go as they do.
TEST(GraphLazySweeping, ADroppedScopesNameTablesWaitWithItsNodes) {
  Graph g;
  NodeHandle kept = AddFloatAttrNode(g, "kept", 1.0f);
  for (int i = 0; i < 3; ++i) AddFloatAttrNode(g, "model/n", 1.0f);
  EXPECT_EQ(g.Collect().swept, 3);
  EXPECT_FALSE(g.IsScopeInUse("model"));        // unlinked by the collection
  EXPECT_EQ(g.heap().unreclaimed_count(), 4u);  // 3 nodes and their group
  NodeHandle a = AddFloatAttrNode(g, "model/n", 1.0f);
  EXPECT_EQ(g.heap().unreclaimed_count(), 2u);
  g.Collect();  // takes the rest; the new "model" group lives
  EXPECT_EQ(g.heap().unreclaimed_count(), 0u);
  EXPECT_EQ(g.FindNode("model/n").has_value(), true);
}

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

// A batch node of op "Test" with one float output.
BatchNodeSpec BatchTestNode(
    const std::string& name,
    std::vector<std::variant<Output, BatchOutput>> inputs = {},
    std::vector<std::variant<NodeHandle, BatchNode>> control = {}) {
  return BatchNodeSpec{.op = "Test",
                       .name = name,
                       .inputs = std::move(inputs),
                       .control_inputs = std::move(control),
                       .output_types = {DT_FLOAT},
                       .output_shapes = {TensorShape{}}};
}

TEST(GraphAddNodes, AddsEveryNodeWithItsEdgesAndExactNames) {
  Graph g;
  NodeHandle x = AddTestNode(g, "x");
  std::vector<NodeHandle> added =
      g.AddNodes({BatchTestNode("a", {Output(x, 0)}),
                  BatchTestNode("b", {BatchOutput{.position = 0}},
                                {BatchNode{.position = 0}, x})})
          .value();
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(g.num_nodes(), 3);
  NodeInfo b = g.Describe(added[1]).value();
  EXPECT_EQ(b.name, "b");
  ASSERT_EQ(b.inputs.size(), 1u);
  EXPECT_EQ(b.inputs[0].handle(), added[0]);
  EXPECT_EQ(b.control_inputs, (std::vector<NodeHandle>{added[0], x}));
  EXPECT_EQ(g.Describe(added[0])->inputs[0].handle(), x);
}

TEST(GraphAddNodes, ReturnedHandlesKeepTheBatchAlive) {
  Graph g;
  std::vector<NodeHandle> added =
      g.AddNodes({BatchTestNode("a"),
                  BatchTestNode("b", {BatchOutput{.position = 0}})})
          .value();
  EXPECT_EQ(g.Collect().swept, 0);
  added.clear();
  EXPECT_EQ(g.Collect().swept, 2);
}

// Tries `batch` on a graph holding "kept" and checks that it fails with
// `code` and leaves the graph as it was: same live count, no batch name
// taken, and the batch's names still free for AddNode.
void ExpectBatchChangesNothing(std::vector<BatchNodeSpec> batch,
                               absl::StatusCode code,
                               const std::string& message) {
  Graph g;
  NodeHandle kept = AddTestNode(g, "kept");
  std::vector<std::string> names;
  for (const BatchNodeSpec& spec : batch) names.push_back(spec.name);
  absl::StatusOr<std::vector<NodeHandle>> r = g.AddNodes(std::move(batch));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status();
  EXPECT_NE(r.status().message().find(message), std::string::npos)
      << r.status();
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.gc_stats().collections, 0);
  absl::flat_hash_set<std::string> checked = {"kept"};
  for (const std::string& name : names) {
    if (!checked.insert(name).second) continue;
    EXPECT_FALSE(g.FindNode(name).has_value()) << name;
    EXPECT_EQ(g.Describe(AddTestNode(g, name))->name, name);  // still free
  }
}

TEST(GraphAddNodes, ABadNodeInTheMiddleAddsNothing) {
  BatchNodeSpec bad = BatchTestNode("b");
  bad.output_shapes.clear();
  ExpectBatchChangesNothing({BatchTestNode("a"), bad, BatchTestNode("c")},
                            absl::StatusCode::kInvalidArgument,
                            "Test node 'b' (batch position 1): 1 output types "
                            "but 0 output shapes");
}

TEST(GraphAddNodes, AnInvalidNameAddsNothing) {
  Graph g;
  absl::StatusOr<std::vector<NodeHandle>> r =
      g.AddNodes({BatchTestNode("a"), BatchTestNode("_bad")});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'_bad'"), std::string::npos)
      << r.status();
  EXPECT_EQ(g.num_nodes(), 0);
  EXPECT_FALSE(g.FindNode("a").has_value());
}

TEST(GraphAddNodes, ABadLastNodeAddsNothing) {
  ExpectBatchChangesNothing(
      {BatchTestNode("a"), BatchTestNode("b", {BatchOutput{.position = 0}}),
       BatchTestNode("c", {BatchOutput{.position = 1, .index = 4}})},
      absl::StatusCode::kInvalidArgument, "reads output 4 of 'b'");
}

TEST(GraphAddNodes, ANameTwiceInTheBatchAddsNothing) {
  ExpectBatchChangesNothing(
      {BatchTestNode("a"), BatchTestNode("b"), BatchTestNode("a")},
      absl::StatusCode::kInvalidArgument, "name also given to position 0");
}

TEST(GraphAddNodes, ANameALiveNodeHoldsAddsNothing) {
  ExpectBatchChangesNothing({BatchTestNode("a"), BatchTestNode("kept")},
                            absl::StatusCode::kAlreadyExists,
                            "the graph already has a node named 'kept'");
}

TEST(GraphAddNodes, AReferenceToALaterPositionAddsNothing) {
  ExpectBatchChangesNothing(
      {BatchTestNode("a", {}, {BatchNode{.position = 1}}), BatchTestNode("b")},
      absl::StatusCode::kInvalidArgument,
      "reads batch position 1, which does not come before it");
}

TEST(GraphAddNodes, AnInputOfAnotherGraphAddsNothing) {
  Graph other;
  NodeHandle foreign = AddTestNode(other, "foreign");
  ExpectBatchChangesNothing(
      {BatchTestNode("a"), BatchTestNode("b", {Output(foreign, 0)})},
      absl::StatusCode::kInvalidArgument, "belongs to another graph");
}

TEST(GraphAddNodes, IsNotASafePoint) {
  Graph g;
  g.set_gc_policy(GcPolicy{.growth_ratio = 0, .min_new_nodes = 0});
  AddTestNode(g, "garbage");  // dropped at once
  ASSERT_TRUE(g.AddNodes({BatchTestNode("a")}).ok());
  EXPECT_EQ(g.gc_stats().collections, 0);
  EXPECT_TRUE(g.FindNode("garbage").has_value());
}

TEST(GraphAddNodes, AnEmptyBatchAddsNothing) {
  Graph g;
  EXPECT_TRUE(g.AddNodes({}).value().empty());
  EXPECT_EQ(g.num_nodes(), 0);
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
      g->collector().Listen([](const CollectEvent&) {});
  g.reset();
  r.Reset();
}

TEST(GraphLifetime, AListenerRegistrationRemovesItsListener) {
  Graph g;
  int calls = 0;
  {
    CollectListenerRegistration r =
        g.collector().Listen([&](const CollectEvent&) { ++calls; });
    g.Collect();
  }
  g.Collect();
  EXPECT_EQ(calls, 2);  // start and end of the first collection only
}

}  // namespace
}  // namespace graphgc
