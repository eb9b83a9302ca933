#include "models/model_graph.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/layer_registry.h"
#include "models/layer_state.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The layers' states are made here directly, through the registry: a
// ModelGraph holds states, not Layer handles.
std::shared_ptr<LayerState> StateOf(const std::string& class_name) {
  const LayerKind* kind = FindLayerKind(class_name);
  EXPECT_NE(kind, nullptr) << class_name;
  return NewLayerState(*kind, "", std::make_unique<LayerConfig>());
}

std::shared_ptr<LayerState> InputState(TensorShape shape) {
  std::shared_ptr<LayerState> s = StateOf("InputLayer");
  s->input_shape = std::move(shape);
  return s;
}

std::shared_ptr<LayerState> FlattenState() { return StateOf("Flatten"); }

// Input([2, 3]) -> Flatten -> Flatten.
ModelGraph Chain() {
  return LinearGraph({InputState({2, 3}), FlattenState(), FlattenState()});
}

TEST(LinearGraphTest, EachCallReadsThePreviousOneAndTheFirstReadsNothing) {
  const ModelGraph g = Chain();
  ASSERT_EQ(g.calls.size(), 3u);
  EXPECT_TRUE(g.calls[0].inputs.empty());
  EXPECT_THAT(g.calls[1].inputs, ElementsAre(0));
  EXPECT_THAT(g.calls[2].inputs, ElementsAre(1));
}

TEST(LinearGraphTest, HasTheFirstCallAsItsInputAndTheLastAsItsOutput) {
  const ModelGraph g = Chain();
  EXPECT_THAT(g.inputs, ElementsAre(0));
  EXPECT_THAT(g.outputs, ElementsAre(2));
}

TEST(LinearGraphTest, KeepsTheLayersInOrder) {
  std::shared_ptr<LayerState> input = InputState({4});
  std::shared_ptr<LayerState> flatten = FlattenState();
  const ModelGraph g = LinearGraph({input, flatten});
  EXPECT_EQ(g.calls[0].layer, input);
  EXPECT_EQ(g.calls[1].layer, flatten);
}

TEST(CheckModelGraphTest, AcceptsALinearGraph) {
  EXPECT_TRUE(CheckModelGraph(Chain(), "here").ok());
}

TEST(CheckModelGraphTest, AcceptsTwoInputsAndTwoOutputs) {
  ModelGraph g;
  g.calls = {{.layer = InputState({2})},
             {.layer = InputState({3})},
             {.layer = FlattenState(), .inputs = {0}},
             {.layer = FlattenState(), .inputs = {1}}};
  g.inputs = {0, 1};
  g.outputs = {2, 3};
  EXPECT_TRUE(CheckModelGraph(g, "here").ok());
}

TEST(CheckModelGraphTest, RefusesACallReadingALaterCall) {
  ModelGraph g = Chain();
  g.calls[1].inputs = {2};
  const absl::Status s = CheckModelGraph(g, "here");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("here: call 1 reads call 2"));
}

TEST(CheckModelGraphTest, RefusesACallReadingItself) {
  ModelGraph g = Chain();
  g.calls[1].inputs = {1};
  EXPECT_THAT(CheckModelGraph(g, "here").message(),
              HasSubstr("call 1 reads call 1, which is not an earlier call"));
}

TEST(CheckModelGraphTest, RefusesALayerCallReadingTwoValues) {
  ModelGraph g = Chain();
  g.calls[2].inputs = {0, 1};
  EXPECT_THAT(CheckModelGraph(g, "here").message(),
              HasSubstr("call 2 reads 2 values; its layer takes 1"));
}

// Input([6]) and Flatten of it, merged by `merge` (no options).
ModelGraph Merged(const std::string& merge, std::vector<int> reads) {
  ModelGraph g;
  g.calls = {{.layer = InputState({6})},
             {.layer = FlattenState(), .inputs = {0}},
             {.layer = StateOf(merge), .inputs = std::move(reads)}};
  g.inputs = {0};
  g.outputs = {2};
  return g;
}

TEST(CheckModelGraphTest, AcceptsAMergeCallReadingTheValuesItsKindAllows) {
  EXPECT_TRUE(CheckModelGraph(Merged("Add", {0, 1}), "here").ok());
  EXPECT_TRUE(CheckModelGraph(Merged("Add", {0, 1, 1}), "here").ok());
  EXPECT_TRUE(CheckModelGraph(Merged("Subtract", {1, 0}), "here").ok());
}

TEST(CheckModelGraphTest, RefusesAMergeCallReadingMoreThanItsKindAllows) {
  EXPECT_THAT(CheckModelGraph(Merged("Subtract", {0, 1, 1}), "here").message(),
              HasSubstr("call 2 reads 3 values; its layer takes exactly 2"));
}

TEST(CheckCallsTest, GivesAMergeCallTheShapesOfEveryValueItReads) {
  Graph graph;
  absl::StatusOr<std::vector<TensorShape>> shapes =
      CheckCalls(Merged("Add", {0, 1}), graph, "here");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[2], TensorShape({6}));
}

TEST(CheckCallsTest, RefusesAMergeOfIncompatibleShapesNamingTheCall) {
  ModelGraph g = Merged("Add", {0, 1});
  g.calls[0].layer = InputState({2, 3});
  Graph graph;
  absl::StatusOr<std::vector<TensorShape>> shapes =
      CheckCalls(g, graph, "here");
  EXPECT_THAT(shapes.status().message(),
              HasSubstr("here: layer 2: Add: Inputs have incompatible shapes. "
                        "Received shapes (2, 3) and (6,)"));
}

TEST(CheckModelGraphTest, RefusesAnInputLayerThatIsNotAModelInput) {
  ModelGraph g = Chain();
  g.calls[1] = {.layer = InputState({6})};
  EXPECT_THAT(CheckModelGraph(g, "here").message(),
              HasSubstr("call 1 is an Input layer but not one of the model's "
                        "inputs"));
}

TEST(CheckModelGraphTest, RefusesAModelInputThatIsNotAnInputLayer) {
  ModelGraph g = Chain();
  g.inputs = {0, 1};
  EXPECT_THAT(CheckModelGraph(g, "here").message(),
              HasSubstr("call 1 is one of the model's inputs but not an Input "
                        "layer"));
}

TEST(CheckModelGraphTest, RefusesACallWithoutALayer) {
  ModelGraph g = Chain();
  g.calls[2].layer = nullptr;
  EXPECT_THAT(CheckModelGraph(g, "here").message(),
              HasSubstr("call 2 has no layer"));
}

TEST(CheckModelGraphTest, RefusesAModelWithoutOutputs) {
  ModelGraph g = Chain();
  g.outputs.clear();
  EXPECT_THAT(CheckModelGraph(g, "here").message(),
              HasSubstr("here: the model has no outputs"));
}

TEST(CheckModelGraphTest, RefusesAModelWithoutInputs) {
  ModelGraph g = Chain();
  g.inputs.clear();
  EXPECT_THAT(CheckModelGraph(g, "here").message(),
              HasSubstr("here: the model has no inputs"));
}

TEST(CheckModelGraphTest, RefusesAnOutputNamingNoCall) {
  ModelGraph g = Chain();
  g.outputs = {3};
  EXPECT_THAT(CheckModelGraph(g, "here").message(),
              HasSubstr("outputs 0 names call 3 of 3"));
}

TEST(CheckModelGraphTest, RefusesAnOutputListedTwice) {
  ModelGraph g = Chain();
  g.outputs = {2, 2};
  EXPECT_THAT(CheckModelGraph(g, "here").message(),
              HasSubstr("outputs 1 names call 2 twice"));
}

TEST(CheckModelGraphTest, RefusesTheEmptyLinearGraph) {
  EXPECT_EQ(CheckModelGraph(LinearGraph({}), "here").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CheckCallsTest, GivesEachCallsValueShape) {
  Graph graph;
  absl::StatusOr<std::vector<TensorShape>> shapes =
      CheckCalls(Chain(), graph, "here");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_THAT(*shapes, ElementsAre(TensorShape({2, 3}), TensorShape({6}),
                                   TensorShape({6})));
}

TEST(CheckCallsTest, ReadsEachCallsOwnInput) {
  ModelGraph g;
  g.calls = {{.layer = InputState({2, 2})},
             {.layer = InputState({3, 1})},
             {.layer = FlattenState(), .inputs = {0}},
             {.layer = FlattenState(), .inputs = {1}}};
  g.inputs = {0, 1};
  g.outputs = {2, 3};
  Graph graph;
  absl::StatusOr<std::vector<TensorShape>> shapes = CheckCalls(g, graph, "x");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[2], TensorShape({4}));
  EXPECT_EQ((*shapes)[3], TensorShape({3}));
}

TEST(CheckCallsTest, NamesTheCallWhoseLayerIsRefused) {
  ModelGraph g = Chain();
  g.calls[1].layer->error = absl::InvalidArgumentError("bad options");
  Graph graph;
  absl::StatusOr<std::vector<TensorShape>> shapes = CheckCalls(g, graph, "M");
  EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shapes.status().message(), HasSubstr("M: layer 1: bad options"));
}

TEST(CheckCallsTest, BuildsNothing) {
  const ModelGraph g = Chain();
  Graph graph;
  ASSERT_TRUE(CheckCalls(g, graph, "here").ok());
  for (const LayerCall& call : g.calls) {
    EXPECT_EQ(call.layer->built(), nullptr);
  }
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
