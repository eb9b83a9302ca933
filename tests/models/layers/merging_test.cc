// The merge kinds of models/layers/ (add.cc, subtract.cc, multiply.cc,
// average.cc, maximum.cc, minimum.cc, concatenate.cc; Keras's
// layers/merging): their registry entries, values and gradients, in
// functional models.
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/functional.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "tests/testing/numeric_gradient.h"

namespace graphgc {
namespace {

Tensor Floats(TensorShape shape, std::vector<float> v) {
  return Tensor::FromData<float>(shape, v).value();
}

std::vector<float> Values(const Tensor& t) {
  const auto data = t.data<float>();
  return std::vector<float>(data.begin(), data.end());
}

struct MergeCase {
  std::string class_name;
  std::function<Layer()> make;
  // The merge of x and 2x, per value of x.
  std::function<std::vector<float>(float)> of_x_and_2x;
};

std::vector<MergeCase> Cases() {
  return {
      {"Add", [] { return layers::Add(); },
       [](float x) { return std::vector<float>{3 * x}; }},
      {"Subtract", [] { return layers::Subtract(); },
       [](float x) { return std::vector<float>{-x}; }},
      {"Multiply", [] { return layers::Multiply(); },
       [](float x) { return std::vector<float>{2 * x * x}; }},
      {"Average", [] { return layers::Average(); },
       [](float x) { return std::vector<float>{1.5f * x}; }},
      {"Maximum", [] { return layers::Maximum(); },
       [](float x) { return std::vector<float>{std::max(x, 2 * x)}; }},
      {"Minimum", [] { return layers::Minimum(); },
       [](float x) { return std::vector<float>{std::min(x, 2 * x)}; }},
      {"Concatenate", [] { return layers::Concatenate(); }, nullptr},
  };
}

class MergingTest : public ::testing::TestWithParam<MergeCase> {
 protected:
  Graph g_;
};

TEST_P(MergingTest, IsARegisteredKindWithKerasFields) {
  const MergeCase& c = GetParam();
  bool found = false;
  for (const layers::LayerKindInfo& kind : layers::RegisteredKinds()) {
    if (kind.class_name != c.class_name) continue;
    found = true;
    ASSERT_FALSE(kind.fields.empty());
    EXPECT_EQ(kind.fields.back().name, "name");
  }
  EXPECT_TRUE(found);
  absl::StatusOr<Layer> layer = layers::FromConfig(c.class_name, "{}");
  ASSERT_TRUE(layer.ok()) << layer.status();
  EXPECT_EQ(layer->kind(), c.class_name);
}

TEST_P(MergingTest, MergesXAndTwiceX) {
  const MergeCase& c = GetParam();
  KerasTensor x = Input({3});
  KerasTensor twice = layers::Dense(3, {.use_bias = false})(x);
  Functional m =
      Functional::Create({x}, {c.make()({x, twice})}, {.graph = &g_}).value();
  std::vector<float> kernel(9, 0.f);
  for (int i = 0; i < 3; ++i) kernel[i * 4] = 2.f;
  ASSERT_TRUE(m.SetWeights({Floats({3, 3}, kernel)}).ok());
  const std::vector<float> in = {-1.5f, 0.f, 2.f};
  std::vector<float> out = Values(m.Predict(Floats({1, 3}, in)).value());
  std::vector<float> want;
  if (c.of_x_and_2x == nullptr) {  // Concatenate: x then 2x
    want = {-1.5f, 0.f, 2.f, -3.f, 0.f, 4.f};
  } else {
    for (float v : in) want.push_back(c.of_x_and_2x(v)[0]);
  }
  EXPECT_THAT(out, ::testing::Pointwise(::testing::FloatEq(), want));
}

// A Fit step with SGD moves each weight by -learning_rate times the loss's
// gradient, which goes back through the merge; it is measured here by
// central differences of Evaluate's loss.
TEST_P(MergingTest, AFitStepFollowsTheNumericalGradientThroughTheMerge) {
  const MergeCase& c = GetParam();
  KerasTensor x = Input({3});
  KerasTensor a = layers::Dense(3, {.activation = "tanh", .seed = 1})(x);
  KerasTensor b = layers::Dense(3, {.seed = 2})(x);
  Functional m =
      Functional::Create({x}, {layers::Dense(2, {.seed = 3})(c.make()({a, b}))},
                         {.graph = &g_})
          .value();
  const float lr = 1e-3f;
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      m,
      Floats({4, 3}, {0.1f, -0.7f, 0.4f, 0.9f, 0.3f, -0.2f, -0.5f, 0.8f, 0.6f,
                      0.2f, -0.9f, -0.3f}),
      Floats({4, 2}, {0.5f, -0.2f, 0.1f, 0.7f, -0.4f, 0.3f, 0.9f, 0.f}), lr);
}

// Keras's axis counts the batch: on (None, 2, 3) inputs, 1 and -2 join the
// rows, 2 and -1 the columns.
TEST(ConcatenateTest, JoinsAlongAMiddleAxis) {
  Graph g;
  KerasTensor x = Input({2, 3});
  for (int64_t axis : {1, -2}) {
    KerasTensor y = layers::Concatenate(axis)({x, x});
    ASSERT_TRUE(y.status().ok()) << y.status();
    EXPECT_EQ(y.shape(), TensorShape({4, 3}));
  }
  EXPECT_EQ(layers::Concatenate(2)({x, x}).shape(), TensorShape({2, 6}));
  Functional m =
      Functional::Create({x}, {layers::Concatenate(1)({x, x})}, {.graph = &g})
          .value();
  Tensor out = m.Predict(Floats({1, 2, 3}, {1, 2, 3, 4, 5, 6})).value();
  EXPECT_EQ(out.shape(), TensorShape({1, 4, 3}));
  EXPECT_THAT(Values(out),
              ::testing::ElementsAre(1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6));
}

TEST(ConcatenateTest, AnOutOfRangeAxisIsRefused) {
  KerasTensor y = layers::Concatenate(3, "cat")({Input({2, 3}), Input({2, 3})});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(y.status().message()),
              ::testing::HasSubstr("axis 3 is out of range"));
  KerasTensor z = layers::Concatenate(1)({Input({2, 3}), Input({2, 4})});
  EXPECT_THAT(std::string(z.status().message()),
              ::testing::HasSubstr("A `Concatenate` layer requires inputs "
                                   "with matching shapes except for the "
                                   "concatenation axis."));
}

// Each output element is a copy of one input element: a NaN stays in its
// own place, the rest of its row keeps its values.
TEST(ConcatenateTest, ANanStaysInItsOwnElement) {
  Graph g;
  KerasTensor x = Input({2});
  Functional m =
      Functional::Create({x}, {layers::Concatenate()({x, x})}, {.graph = &g})
          .value();
  const float nan = std::nanf("");
  std::vector<float> out =
      Values(m.Predict(Floats({2, 2}, {nan, 1, 3, 4})).value());
  ASSERT_EQ(out.size(), 8u);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 1.f);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 1.f);
  EXPECT_THAT(std::vector<float>(out.begin() + 4, out.end()),
              ::testing::ElementsAre(3, 4, 3, 4));
}

TEST(ConcatenateTest, AFitStepFollowsTheNumericalGradientAlongAMiddleAxis) {
  Graph g;
  KerasTensor x = Input({6});
  KerasTensor a = layers::Reshape({2, 3})(
      layers::Dense(6, {.activation = "tanh", .seed = 1})(x));
  KerasTensor b = layers::Reshape({1, 3})(layers::Dense(3, {.seed = 2})(x));
  KerasTensor joined = layers::Concatenate(1)({a, b});
  Functional m =
      Functional::Create(
          {x}, {layers::Dense(2, {.seed = 3})(layers::Flatten()(joined))},
          {.graph = &g})
          .value();
  const float lr = 1e-3f;
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      m,
      Floats({2, 6}, {0.1f, -0.7f, 0.4f, 0.9f, 0.3f, -0.2f, -0.5f, 0.8f, 0.6f,
                      0.2f, -0.9f, -0.3f}),
      Floats({2, 2}, {0.5f, -0.2f, 0.1f, 0.7f}), lr);
}

TEST(ConcatenateTest, TheGraphJoinsWithConcatV2) {
  Graph g;
  KerasTensor x = Input({2});
  Functional m =
      Functional::Create({x}, {layers::Concatenate(-1, "cat")({x, x})},
                         {.graph = &g})
          .value();
  ASSERT_TRUE(m.outputs()[0].status().ok());
  std::optional<NodeHandle> concat = g.FindNode("cat/concat");
  ASSERT_TRUE(concat.has_value());
  EXPECT_EQ(g.Describe(*concat).value().op, "ConcatV2");
  EXPECT_FALSE(g.FindNode("cat/MatMul").has_value());
}

INSTANTIATE_TEST_SUITE_P(MergeKinds, MergingTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<MergeCase>& info) {
                           return info.param.class_name;
                         });

}  // namespace
}  // namespace graphgc
