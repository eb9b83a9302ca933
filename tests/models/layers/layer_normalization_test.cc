// models/layers/layer_normalization.cc: the LayerNormalization kind, reached
// through the layer registry (layers::FromConfig, LoadModel), in models,
// Summary, training and save/load.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "serialize/keras_weights.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/layer_models.h"
#include "tests/testing/numeric_gradient.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

using ::testing::HasSubstr;
using testing_internal::FloatValues;
using testing_internal::Json;
using testing_internal::ReadJson;
using testing_internal::T;

Layer LayerNorm(const std::string& config) {
  absl::StatusOr<Layer> layer =
      layers::FromConfig("LayerNormalization", config);
  EXPECT_TRUE(layer.ok()) << layer.status();
  return layer.ok() ? *layer : Layer();
}

// Keras's formula on one row: (x - mean) / sqrt(var + eps) * gamma + beta.
std::vector<float> Normalised(const std::vector<float>& row, float eps,
                              const std::vector<float>& gamma,
                              const std::vector<float>& beta) {
  double mean = 0, var = 0;
  for (float v : row) mean += v;
  mean /= row.size();
  for (float v : row) var += (v - mean) * (v - mean);
  var /= row.size();
  std::vector<float> out;
  for (size_t i = 0; i < row.size(); ++i) {
    out.push_back(static_cast<float>(
        (row[i] - mean) / std::sqrt(var + eps) * gamma[i] + beta[i]));
  }
  return out;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
  }
}

TEST(LayerNormalization, IsARegisteredKindWithKeras3Arguments) {
  for (const layers::LayerKindInfo& kind : layers::RegisteredKinds()) {
    if (kind.class_name != "LayerNormalization") continue;
    ASSERT_GE(kind.fields.size(), 5u);
    EXPECT_EQ(kind.fields[0].name, "axis");
    EXPECT_EQ(kind.fields[0].default_json, "-1");
    EXPECT_EQ(kind.fields[1].name, "epsilon");
    EXPECT_EQ(kind.fields[1].default_json, "0.001");
    EXPECT_EQ(kind.fields[2].name, "center");
    EXPECT_EQ(kind.fields[3].name, "scale");
    EXPECT_EQ(kind.fields[4].name, "rms_scaling");
    return;
  }
  ADD_FAILURE() << "LayerNormalization is not registered";
}

TEST(LayerNormalization, NormalisesEachSampleOverTheLastAxis) {
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({4}), LayerNorm("{}")}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(
      m->SetWeights({T({4}, {1, 2, 0.5, -1}), T({4}, {0, 0.5, 1, -2})}).ok());
  absl::StatusOr<Tensor> y = m->Predict(T({2, 4}, {1, 2, 3, 4, -3, 0, 0, 7}));
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<float> want =
      Normalised({1, 2, 3, 4}, 1e-3f, {1, 2, 0.5, -1}, {0, 0.5, 1, -2});
  const std::vector<float> second =
      Normalised({-3, 0, 0, 7}, 1e-3f, {1, 2, 0.5, -1}, {0, 0.5, 1, -2});
  want.insert(want.end(), second.begin(), second.end());
  ExpectNear(FloatValues(*y), want);
}

TEST(LayerNormalization, NormalisesTheLastAxisOfRank3Inputs) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2, 3}), LayerNorm(R"({"axis": [2], "epsilon": 0.5})")},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y = m->Predict(T({1, 2, 3}, {1, 2, 3, 0, 0, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<float> want = Normalised({1, 2, 3}, 0.5f, {1, 1, 1}, {0, 0, 0});
  const std::vector<float> second =
      Normalised({0, 0, 3}, 0.5f, {1, 1, 1}, {0, 0, 0});
  want.insert(want.end(), second.begin(), second.end());
  ExpectNear(FloatValues(*y), want);
}

TEST(LayerNormalization, RmsScalingDividesByTheStandardDeviationOnly) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2}), LayerNorm(R"({"rms_scaling": true})")},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->GetWeights().size(), 1u);  // gamma only, as Keras
  absl::StatusOr<Tensor> y = m->Predict(T({1, 2}, {1, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  const float inv = 1.f / std::sqrt(1.f + 1e-3f);  // variance 1
  ExpectNear(FloatValues(*y), {1 * inv, 3 * inv});
}

TEST(LayerNormalization, WeightsFollowCenterAndScale) {
  for (const auto& [config, count] :
       std::vector<std::pair<std::string, size_t>>{
           {"{}", 2},
           {R"({"center": false})", 1},
           {R"({"scale": false})", 1},
           {R"({"center": false, "scale": false})", 0}}) {
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({3}), LayerNorm(config)}, {.graph = &g});
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->GetWeights().size(), count) << config;
  }
  // scale=false keeps beta: a shift only.
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2}), LayerNorm(R"({"scale": false})")}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->SetWeights({T({2}, {10, 20})}).ok());
  absl::StatusOr<Tensor> y = m->Predict(T({1, 2}, {0, 2}));
  ASSERT_TRUE(y.ok()) << y.status();
  const float z = 1.f / std::sqrt(1.f + 1e-3f);
  ExpectNear(FloatValues(*y), {10 - z, 20 + z});
}

TEST(LayerNormalization, AnAxisOtherThanTheLastIsRefusedNamingIt) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2, 3}), LayerNorm(R"({"axis": 1})")}, {.graph = &g});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("LayerNormalization"));
  EXPECT_THAT(m.status().message(), HasSubstr("axis 1"));
  Graph g2;
  m = Sequential::Create(
      {layers::Input({2, 3}), LayerNorm(R"({"axis": [1, 2]})")},
      {.graph = &g2});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("axis [1, 2]"));
}

TEST(LayerNormalization, BadEpsilonAndInitializerAreRefused) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2}), LayerNorm(R"({"epsilon": 0})")}, {.graph = &g});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("epsilon"));
  absl::StatusOr<Layer> layer = layers::FromConfig(
      "LayerNormalization", R"({"gamma_initializer": "glorot_uniform"})");
  ASSERT_EQ(layer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(layer.status().message(), HasSubstr("gamma_initializer"));
}

TEST(LayerNormalization, SummaryShowsShapeAndParams) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({5, 4}), LayerNorm("{}")}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  // The type column wraps at Keras's width, as Keras's does.
  EXPECT_THAT(s, HasSubstr("layer_normalization (LayerNo"));
  EXPECT_THAT(s, HasSubstr("rmalization)"));
  EXPECT_THAT(s, HasSubstr("(None, 5, 4)"));
  EXPECT_THAT(s, HasSubstr("Total params: 8"));
}

TEST(LayerNormalization, AFitStepFollowsTheNumericalGradient) {
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({3}), layers::Dense(4, {.seed = 3}),
                          LayerNorm("{}"), layers::Dense(1, {.seed = 4})},
                         {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Tensor> w = m->GetWeights();
  w[2] = T({4}, {1.5, 0.5, -1, 2});
  w[3] = T({4}, {0.1, -0.2, 0.3, 0});
  ASSERT_TRUE(m->SetWeights(w).ok());
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, T({3, 3}, {1, -2, 0.5, 0, 1, 3, -1, -1, 2}), T({3, 1}, {1, -1, 0.5}),
      lr);
}

TEST(LayerNormalization, SaveWritesKerasConfigAndWeightsAndLoadsBack) {
  const std::string dir = TestTempPath();
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({3}), LayerNorm(R"({"epsilon": 0.01, "name": "ln"})")},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->SetWeights({T({3}, {1, 2, 3}), T({3}, {4, 5, 6})}).ok());
  ASSERT_TRUE(m->Save(dir).ok());

  const Json layer = ReadJson(dir + "/config.json")["config"]["layers"][1];
  EXPECT_EQ(layer["class_name"], "LayerNormalization");
  EXPECT_EQ(layer["module"], "keras.layers");
  const Json& c = layer["config"];
  EXPECT_EQ(c["name"], "ln");
  EXPECT_EQ(c["axis"], Json({-1}));
  EXPECT_EQ(c["epsilon"], Json(0.01));
  EXPECT_EQ(c["center"], true);
  EXPECT_EQ(c["scale"], true);
  EXPECT_EQ(c["rms_scaling"], false);
  EXPECT_EQ(c["gamma_initializer"]["class_name"], "Ones");
  EXPECT_EQ(c["beta_initializer"]["class_name"], "Zeros");

  // Keras's layout: layers/layer_normalization/vars/0 gamma, vars/1 beta.
  auto values = DecodeKerasWeights(
      ReadFileBytes(dir + "/model.weights.h5"),
      {{.path = "layers/layer_normalization", .shapes = {{3}, {3}}}}, "w.h5");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(FloatValues((*values)[0][0]), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(FloatValues((*values)[0][1]), (std::vector<float>{4, 5, 6}));

  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->layers()[1].kind(), "LayerNormalization");
  EXPECT_EQ(loaded->layers()[1].name(), "ln");
  const Tensor x = T({1, 3}, {1, 0, -4});
  absl::StatusOr<Tensor> a = m->Predict(x);
  absl::StatusOr<Tensor> b = loaded->Predict(x);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(FloatValues(*a), FloatValues(*b));
}

}  // namespace
}  // namespace graphgc
