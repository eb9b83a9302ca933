// models/layers/leaky_relu.cc: the LeakyReLU kind, reached only through the
// layer registry (layers::FromConfig, LoadModel), in models, Summary and
// save/load.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "nlohmann/json.hpp"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

using Json = nlohmann::json;

Json ReadJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Json::parse(std::string((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>()));
}

Layer LeakyReLU(const std::string& config) {
  absl::StatusOr<Layer> layer = layers::FromConfig("LeakyReLU", config);
  EXPECT_TRUE(layer.ok()) << layer.status();
  return layer.ok() ? *layer : Layer();
}

std::vector<float> Values(const Tensor& t) {
  const auto data = t.data<float>();
  return std::vector<float>(data.begin(), data.end());
}

Tensor Row(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  absl::StatusOr<Tensor> t = Tensor::FromData<float>({1, n}, values);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

TEST(LeakyReLU, IsARegisteredKind) {
  bool found = false;
  for (const layers::LayerKindInfo& kind : layers::RegisteredKinds()) {
    if (kind.class_name != "LeakyReLU") continue;
    found = true;
    ASSERT_EQ(kind.fields.size(), 2u);
    EXPECT_EQ(kind.fields[0].name, "negative_slope");
    EXPECT_EQ(kind.fields[0].default_json, "0.3");
    EXPECT_EQ(kind.fields[1].name, "name");
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(LeakyReLU("{}").kind(), "LeakyReLU");
}

TEST(LeakyReLU, ScalesNegativeValuesBySlope) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({5}), LeakyReLU(R"({"negative_slope": 0.5})")},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y = m->Predict(Row({-10, -5, 0, 5, 10}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<float>{-5, -2.5, 0, 5, 10}));
}

TEST(LeakyReLU, DefaultSlopeIsKeras3s) {
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({2}), LeakyReLU("{}")}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y = m->Predict(Row({-1, 2}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_FLOAT_EQ(Values(*y)[0], -0.3f);
  EXPECT_FLOAT_EQ(Values(*y)[1], 2.f);
}

TEST(LeakyReLU, SlopeAboveOneKeepsPositiveValues) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2}), LeakyReLU(R"({"negative_slope": 2})")},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y = m->Predict(Row({-1, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<float>{-2, 3}));
}

TEST(LeakyReLU, NegativeSlopeIsRefusedAtCreate) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2}), LeakyReLU(R"({"negative_slope": -1})")},
      {.graph = &g});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("negative_slope"), std::string::npos)
      << m.status();
}

TEST(LeakyReLU, NonNumericSlopeIsRefusedByTheReader) {
  absl::StatusOr<Layer> layer =
      layers::FromConfig("LeakyReLU", R"({"negative_slope": "big"})");
  ASSERT_EQ(layer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(layer.status().message().find("'negative_slope'"),
            std::string::npos)
      << layer.status();
}

TEST(LeakyReLU, SummaryHasItsRowWithoutParams) {
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({3}), LeakyReLU("{}")}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string summary = m->Summary();
  EXPECT_NE(summary.find("leaky_re_lu (LeakyReLU)"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("(None, 3)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("Total params: 0"), std::string::npos) << summary;
}

TEST(LeakyReLU, TrainsBehindADenseLayer) {
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({2}), layers::Dense(4, {.seed = 1}),
                          LeakyReLU("{}"), layers::Dense(1, {.seed = 2})},
                         {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD(),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  absl::StatusOr<Tensor> x =
      Tensor::FromData<float>({4, 2}, {-1, 2, 3, -4, 0.5, 0.5, -2, -2});
  absl::StatusOr<Tensor> y = Tensor::FromData<float>({4, 1}, {1, -1, 0, 2});
  ASSERT_TRUE(x.ok() && y.ok());
  absl::StatusOr<History> h =
      m->Fit(*x, *y, {.epochs = 2, .verbose = 0, .seed = 1});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->history["loss"].size(), 2u);
}

TEST(LeakyReLU, SaveWritesKerasConfigAndLoadsBack) {
  const std::string dir = TestTempPath();
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({3}),
       LeakyReLU(R"({"negative_slope": 0.2, "name": "leaky"})")},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->Save(dir).ok());

  const Json config = ReadJson(dir + "/config.json");
  const Json& layer = config["config"]["layers"][1];
  EXPECT_EQ(layer["class_name"], "LeakyReLU");
  EXPECT_EQ(layer["module"], "keras.layers");
  EXPECT_EQ(layer["config"]["name"], "leaky");
  EXPECT_EQ(layer["config"]["negative_slope"], Json(0.2));
  EXPECT_EQ(layer["config"]["trainable"], true);
  EXPECT_EQ(layer["config"]["dtype"], "float32");

  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->layers().size(), 2u);
  EXPECT_EQ(loaded->layers()[1].kind(), "LeakyReLU");
  EXPECT_EQ(loaded->layers()[1].name(), "leaky");
  absl::StatusOr<Tensor> y = loaded->Predict(Row({-10, 0, 4}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y), (std::vector<float>{-2, 0, 4}));
}

TEST(LeakyReLU, ReadsKeras2Alpha) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({1}), LeakyReLU(R"({"alpha": 0.1})")}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y = m->Predict(Row({-10}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_FLOAT_EQ(Values(*y)[0], -1.f);
}

}  // namespace
}  // namespace graphgc
