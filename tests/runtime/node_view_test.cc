#include "runtime/node_view.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/node_resource.h"
#include "runtime/op_def.h"
#include "tests/gc/test_graph.h"

namespace graphgc {
namespace {

using testing::AddTestNode;

class CountingResource : public NodeResource {};

class NodeViewTest : public ::testing::Test {
 protected:
  // A node of op "Pair" with two outputs (float [2, -1], int32 scalar),
  // attribute "k" = 3, reading `a`:0 and `b`:1.
  NodeHandle AddPair(const NodeHandle& a, const NodeHandle& b) {
    NodeSpec spec;
    spec.op = "Pair";
    spec.op_def = &pair_def_;
    spec.name = "pair";
    spec.inputs = {Output(a, 0), Output(b, 1)};
    spec.attrs = {{"k", int64_t{3}}};
    spec.output_types = {DT_FLOAT, DT_INT32};
    spec.output_shapes = {TensorShape({2, -1}), TensorShape({})};
    spec.resource = resource_;
    return g_.AddNode(std::move(spec)).value();
  }
  NodeHandle AddTwoOutputs(const std::string& name) {
    NodeSpec spec;
    spec.op = "Two";
    spec.name = name;
    spec.output_types = {DT_FLOAT, DT_FLOAT};
    spec.output_shapes = {TensorShape({}), TensorShape({})};
    return g_.AddNode(std::move(spec)).value();
  }

  Graph g_;
  OpDef pair_def_{.type = "Pair"};
  std::shared_ptr<CountingResource> resource_ =
      std::make_shared<CountingResource>();
};

TEST_F(NodeViewTest, NameIsTheUniquedName) {
  NodeHandle first = AddTestNode(g_, "x");
  NodeHandle second = AddTestNode(g_, "x");
  EXPECT_EQ(NodeView(second).name(), "x_1");
}

TEST_F(NodeViewTest, OpIsTheNodesOpType) {
  NodeHandle a = AddTestNode(g_, "a");
  EXPECT_EQ(NodeView(a).op(), "Test");
}

TEST_F(NodeViewTest, OpDefIsTheOneTheNodeWasBuiltWith) {
  NodeHandle pair = AddPair(AddTestNode(g_, "a"), AddTwoOutputs("b"));
  EXPECT_EQ(NodeView(pair).op_def(), &pair_def_);
}

TEST_F(NodeViewTest, OpDefIsNullForANodeBuiltWithout) {
  EXPECT_EQ(NodeView(AddTestNode(g_, "a")).op_def(), nullptr);
}

TEST_F(NodeViewTest, InputsAreTheProducersAndOutputIndicesInOrder) {
  NodeHandle a = AddTestNode(g_, "a");
  NodeHandle b = AddTwoOutputs("b");
  NodeView view(AddPair(a, b));
  ASSERT_EQ(view.inputs().size(), 2u);
  EXPECT_EQ(view.inputs()[0].node, a.id());
  EXPECT_EQ(view.inputs()[0].index, 0);
  EXPECT_EQ(view.inputs()[1].node, b.id());
  EXPECT_EQ(view.inputs()[1].index, 1);
}

TEST_F(NodeViewTest, InputShowsTheProducerOfThatInput) {
  NodeView view(AddPair(AddTestNode(g_, "a"), AddTwoOutputs("b")));
  EXPECT_EQ(view.input(1).name(), "b");
  EXPECT_EQ(view.input(1).op(), "Two");
}

TEST_F(NodeViewTest, ControlInputsIncludeEdgesAddedAfterTheViewWasMade) {
  NodeHandle before = AddTestNode(g_, "before");
  NodeHandle node = AddTestNode(g_, "node", {}, {before});
  NodeView view(node);
  NodeHandle after = AddTestNode(g_, "after");
  ASSERT_TRUE(g_.AddControlEdge(after, node).ok());
  EXPECT_EQ(view.control_inputs(),
            (std::vector<NodeId>{before.id(), after.id()}));
}

TEST_F(NodeViewTest, AttrsAreTheNodesAttributes) {
  NodeView view(AddPair(AddTestNode(g_, "a"), AddTwoOutputs("b")));
  EXPECT_EQ(GetAttrOr<int64_t>(view.attrs(), "k", 0), 3);
  EXPECT_EQ(view.attrs().size(), 1u);
}

TEST_F(NodeViewTest, OutputTypesAreOnePerOutputInOrder) {
  NodeView view(AddPair(AddTestNode(g_, "a"), AddTwoOutputs("b")));
  EXPECT_EQ(std::vector<DataType>(view.output_types().begin(),
                                  view.output_types().end()),
            (std::vector<DataType>{DT_FLOAT, DT_INT32}));
}

TEST_F(NodeViewTest, OutputShapesKeepUnknownDimensions) {
  NodeView view(AddPair(AddTestNode(g_, "a"), AddTwoOutputs("b")));
  ASSERT_EQ(view.output_shapes().size(), 2u);
  EXPECT_EQ(view.output_shapes()[0], TensorShape({2, -1}));
  EXPECT_EQ(view.output_shapes()[1], TensorShape({}));
}

TEST_F(NodeViewTest, ResourceIsTheNodesOwn) {
  NodeView view(AddPair(AddTestNode(g_, "a"), AddTwoOutputs("b")));
  EXPECT_EQ(view.resource(), resource_.get());
}

TEST_F(NodeViewTest, ResourceIsNullForANodeWithout) {
  EXPECT_EQ(NodeView(AddTestNode(g_, "a")).resource(), nullptr);
}

TEST_F(NodeViewTest, ViewOfAnOutputShowsItsNode) {
  NodeHandle b = AddTwoOutputs("b");
  EXPECT_EQ(NodeView(Output(b, 1)).name(), "b");
}

TEST_F(NodeViewTest, ViewKeepsItsNodeAliveAfterEveryHandleIsDropped) {
  std::optional<NodeView> view;
  {
    NodeHandle a = AddTestNode(g_, "a");
    view.emplace(a);
  }
  EXPECT_EQ(g_.Collect().swept, 0);
  EXPECT_EQ(g_.num_nodes(), 1);
  EXPECT_EQ(view->name(), "a");
}

TEST_F(NodeViewTest, NodeIsSweptOnceItsLastViewIsDropped) {
  std::optional<NodeView> view;
  {
    NodeHandle a = AddTestNode(g_, "a");
    view.emplace(a);
  }
  view.reset();
  EXPECT_EQ(g_.Collect().swept, 1);
  EXPECT_EQ(g_.num_nodes(), 0);
}

TEST_F(NodeViewTest, InputViewKeepsConsumerAndProducerAlive) {
  std::optional<NodeView> producer;
  {
    NodeHandle pair = AddPair(AddTestNode(g_, "a"), AddTwoOutputs("b"));
    producer.emplace(NodeView(pair).input(0));
  }
  EXPECT_EQ(g_.Collect().swept, 0);
  EXPECT_EQ(g_.num_nodes(), 3);
  EXPECT_EQ(producer->name(), "a");
}

}  // namespace
}  // namespace graphgc
