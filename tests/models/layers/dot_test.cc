// models/layers/dot.cc: the Dot merge kind through the layer registry, in
// functional models: the product of rank-2 inputs, normalize, the refused
// axes and ranks, gradient, save/load.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/functional.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "runtime/graph.h"
#include "tests/testing/layer_models.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using ::testing::HasSubstr;
using testing_internal::ExpectNear;
using testing_internal::FloatValues;
using testing_internal::Json;
using testing_internal::Make;
using testing_internal::ReadJson;
using testing_internal::T;

Layer Dot(const std::string& config) { return Make("Dot", config); }

// x -> (x @ diag(1, 1, 1), x @ diag(1, 2, 3)) -> Dot.
absl::StatusOr<Functional> Model(Graph& g, Layer dot) {
  KerasTensor x = Input({3});
  KerasTensor a = layers::Dense(3, {.use_bias = false, .name = "a"})(x);
  KerasTensor b = layers::Dense(3, {.use_bias = false, .name = "b"})(x);
  absl::StatusOr<Functional> m =
      Functional::Create({x}, {dot({a, b})}, {.graph = &g});
  if (!m.ok()) return m;
  GG_RETURN_IF_ERROR(m->SetWeights({T({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}),
                                    T({3, 3}, {1, 0, 0, 0, 2, 0, 0, 0, 3})}));
  return m;
}

TEST(Dot, IsThePerSampleDotProductOfShapeBatchBy1) {
  for (const char* config : {R"({"axes": 1})", R"({"axes": -1})",
                             R"({"axes": [1, 1]})", R"({"axes": [-1, 1]})"}) {
    Graph g;
    absl::StatusOr<Functional> m = Model(g, Dot(config));
    ASSERT_TRUE(m.ok()) << m.status();
    absl::StatusOr<Tensor> y = m->Predict(T({2, 3}, {1, 2, 3, -1, 0, 2}));
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->shape(), TensorShape({2, 1})) << config;
    ExpectNear(FloatValues(*y), {1 + 8 + 27, 1 + 0 + 12});
  }
}

TEST(Dot, NormalizeGivesTheCosineProximity) {
  Graph g;
  absl::StatusOr<Functional> m =
      Model(g, Dot(R"({"axes": 1, "normalize": true})"));
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y = m->Predict(T({2, 3}, {1, 2, 3, 0, 0, 0}));
  ASSERT_TRUE(y.ok()) << y.status();
  // (1, 2, 3) . (1, 4, 9) / (|(1, 2, 3)| |(1, 4, 9)|); zeros stay 0.
  const float cos = 36.f / std::sqrt(14.f * 98.f);
  ExpectNear(FloatValues(*y), {cos, 0});
}

TEST(Dot, TheBatchAxisAndMismatchedSizesAreRefused) {
  Graph g;
  EXPECT_EQ(Model(g, Dot(R"({"axes": 0})")).status().code(),
            absl::StatusCode::kInvalidArgument);
  KerasTensor x = Input({3});
  KerasTensor a = layers::Dense(4)(x);
  KerasTensor y = Dot(R"({"axes": 1})")({x, a});
  Graph g2;
  absl::StatusOr<Functional> m = Functional::Create({x}, {y}, {.graph = &g2});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("Incompatible input shapes"));
  Graph g3;
  absl::StatusOr<Functional> three = Model(g3, Dot(R"({"axes": [1, 1, 1]})"));
  ASSERT_EQ(three.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(three.status().message(), HasSubstr("axes"));
  EXPECT_FALSE(layers::FromConfig("Dot", "{}").ok());  // axes is required
}

TEST(Dot, AFitStepFollowsTheNumericalGradient) {
  for (const char* config :
       {R"({"axes": 1})", R"({"axes": 1, "normalize": true})"}) {
    Graph g;
    absl::StatusOr<Functional> m = Model(g, Dot(config));
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_TRUE(m->SetWeights({T({3, 3}, {1, 0.5, 0, -1, 1, 0.2, 0, 0.3, 1}),
                               T({3, 3}, {0.5, 0, 1, 0, 2, -1, 1, 0, 3})})
                    .ok());
    const float lr = 1e-2f;
    ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                            .loss = losses::MeanSquaredError()})
                    .ok());
    testing_internal::ExpectSgdStepFollowsNumericalGradient(
        *m, T({2, 3}, {1, -2, 0.5, 0.3, 1, -1}), T({2, 1}, {1, -0.5}), lr);
  }
}

TEST(Dot, SaveWritesAxesAndNormalizeAndLoadsBack) {
  const std::string dir = TestTempPath();
  Graph g;
  absl::StatusOr<Functional> m =
      Model(g, Dot(R"({"axes": [1, 1], "normalize": true, "name": "d"})"));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->Save(dir).ok());
  const Json layers = ReadJson(dir + "/config.json")["config"]["layers"];
  const Json& dot = layers[layers.size() - 1];
  EXPECT_EQ(dot["class_name"], "Dot");
  EXPECT_EQ(dot["config"]["name"], "d");
  EXPECT_EQ(dot["config"]["axes"], Json({1, 1}));
  EXPECT_EQ(dot["config"]["normalize"], true);
  Graph g2;
  absl::StatusOr<Functional> loaded = LoadFunctional(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Tensor x = T({1, 3}, {1, -2, 4});
  absl::StatusOr<Tensor> a = m->Predict(x);
  absl::StatusOr<Tensor> b = loaded->Predict(x);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(FloatValues(*a), FloatValues(*b));
}

}  // namespace
}  // namespace graphgc
