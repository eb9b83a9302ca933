// models/layers/embedding.cc: the Embedding kind through the public API
// (layers::Embedding, Sequential), Summary, save/load and training.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "nlohmann/json.hpp"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "serialize/keras_weights.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/numeric_gradient.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using testing_internal::FloatValues;

Json ReadJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Json::parse(std::string((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>()));
}

Tensor T(const TensorShape& shape, std::vector<float> v) {
  absl::StatusOr<Tensor> t = Tensor::FromData<float>(shape, v);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

// An [input_dim=4, output_dim=2] embedding whose row i is (10 i, 10 i + 1).
Sequential Model(Graph& g, int64_t ids_per_sample = 3) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({ids_per_sample}), layers::Embedding(4, 2, {.seed = 1})},
      {.graph = &g});
  EXPECT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(m->SetWeights({T({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31})}).ok());
  return *std::move(m);
}

TEST(Embedding, IsARegisteredKindWithKerasArguments) {
  for (const layers::LayerKindInfo& kind : layers::RegisteredKinds()) {
    if (kind.class_name != "Embedding") continue;
    std::vector<std::string> names;
    for (const auto& f : kind.fields) names.push_back(f.name);
    EXPECT_THAT(names, ::testing::ElementsAre("input_dim", "output_dim",
                                              "embeddings_initializer",
                                              "mask_zero", "name", "seed"));
    EXPECT_EQ(kind.fields[2].default_json, "\"uniform\"");
    return;
  }
  ADD_FAILURE() << "Embedding is not registered";
}

TEST(Embedding, LooksUpTheRowOfEachIdTruncatingFloatIds) {
  Graph g;
  Sequential m = Model(g);
  absl::StatusOr<Tensor> y = m.Predict(T({2, 3}, {3, 0, 1.7f, 2, 2, 0.2f}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({2, 3, 2}));
  EXPECT_EQ(FloatValues(*y),
            (std::vector<float>{30, 31, 0, 1, 10, 11, 20, 21, 20, 21, 0, 1}));
}

TEST(Embedding, AnOutOfRangeIdIsInvalidArgumentNamingTheOpAndTheId) {
  Graph g;
  Sequential m = Model(g);
  absl::StatusOr<Tensor> y = m.Predict(T({1, 3}, {0, 4, 1}));
  ASSERT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(), HasSubstr("GatherV2 'embedding/GatherV2'"));
  EXPECT_THAT(y.status().message(), HasSubstr("= 4 is not in [0, 4)"));
  y = m.Predict(T({1, 3}, {0, -1, 1}));
  EXPECT_THAT(y.status().message(), HasSubstr("= -1 is not in [0, 4)"));
  // The model still works afterwards.
  EXPECT_TRUE(m.Predict(T({1, 3}, {0, 3, 1})).ok());
}

TEST(Embedding, StartsUniformInKerasRange) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({1}), layers::Embedding(50, 8)}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<float> w = FloatValues(m->GetWeights()[0]);
  ASSERT_EQ(w.size(), 400u);
  float lo = 1, hi = -1;
  for (float v : w) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -0.05f);
  EXPECT_LE(hi, 0.05f);
  EXPECT_LT(lo, -0.03f);  // 400 draws spread over the range
  EXPECT_GT(hi, 0.03f);
}

TEST(Embedding, MaskZeroIsRefusedAsNotImplemented) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2}), layers::Embedding(4, 2, {.mask_zero = true})},
      {.graph = &g});
  // Sequential::Create reports a layer's refusal as InvalidArgument.
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(),
              HasSubstr("mask_zero=True is not implemented"));
}

TEST(Embedding, BadSizesAndInitializerAreRefusedAtCreate) {
  for (Layer layer :
       {layers::Embedding(0, 2), layers::Embedding(3, -1),
        layers::Embedding(3, 2, {.embeddings_initializer = "zeros"})}) {
    Graph g;
    absl::StatusOr<Sequential> m =
        Sequential::Create({layers::Input({2}), layer}, {.graph = &g});
    ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(m.status().message(), HasSubstr("layer 1: Embedding"));
  }
}

TEST(Embedding, SummaryCountsKerasParams) {
  Graph g;
  // Keras: embedding (Embedding) (None, 3, 4) 40; dense (None, 3, 1) 5.
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({3}), layers::Embedding(10, 4),
                          layers::Flatten(), layers::Dense(1)},
                         {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  EXPECT_THAT(s, HasSubstr("embedding (Embedding)"));
  EXPECT_THAT(s, HasSubstr("(None, 3, 4)"));
  EXPECT_THAT(s, HasSubstr("Total params: 53"));
}

TEST(Embedding, AFitStepFollowsTheNumericalGradient) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({3}), layers::Embedding(5, 2, {.seed = 3}),
       layers::Flatten(), layers::Dense(1, {.seed = 4})},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  // Id 2 repeats (its row's gradient sums), id 4 never appears (zero).
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, T({2, 3}, {2, 0, 2, 1, 3, 2}), T({2, 1}, {1, -1}), lr);
}

TEST(Embedding, SaveWritesKerasConfigAndWeightsAndLoadsBack) {
  const std::string dir = TestTempPath();
  Graph g;
  Sequential m = Model(g);
  ASSERT_TRUE(m.Save(dir).ok());
  const Json layer = ReadJson(dir + "/config.json")["config"]["layers"][1];
  EXPECT_EQ(layer["class_name"], "Embedding");
  const Json& c = layer["config"];
  EXPECT_EQ(c["input_dim"], 4);
  EXPECT_EQ(c["output_dim"], 2);
  EXPECT_EQ(c["mask_zero"], false);
  EXPECT_EQ(c["embeddings_initializer"]["class_name"], "RandomUniform");
  EXPECT_EQ(c["embeddings_initializer"]["config"]["minval"], Json(-0.05));
  EXPECT_EQ(c["embeddings_initializer"]["config"]["maxval"], Json(0.05));

  auto values = DecodeKerasWeights(
      ReadFileBytes(dir + "/model.weights.h5"),
      {{.path = "layers/embedding", .shapes = {{4, 2}}}}, "w.h5");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(FloatValues((*values)[0][0]),
            (std::vector<float>{0, 1, 10, 11, 20, 21, 30, 31}));

  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->layers()[1].kind(), "Embedding");
  absl::StatusOr<Tensor> y = loaded->Predict(T({1, 3}, {1, 3, 0}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(FloatValues(*y), (std::vector<float>{10, 11, 30, 31, 0, 1}));
}

TEST(Embedding, FromConfigReadsKerasInitializerObjectAndRefusesMaskZero) {
  absl::StatusOr<Layer> layer = layers::FromConfig(
      "Embedding",
      R"({"input_dim": 3, "output_dim": 2, "embeddings_initializer":
          {"module": "keras.initializers", "class_name": "RandomUniform",
           "config": {"minval": -0.5, "maxval": 0.5, "seed": null}},
          "embeddings_regularizer": null, "mask_zero": false})");
  ASSERT_TRUE(layer.ok()) << layer.status();
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({1}), *layer}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  for (float v : FloatValues(m->GetWeights()[0])) {
    EXPECT_LE(std::abs(v), 0.5f);
  }
  absl::StatusOr<Layer> masked = layers::FromConfig(
      "Embedding", R"({"input_dim": 3, "output_dim": 2, "mask_zero": true})");
  ASSERT_TRUE(masked.ok()) << masked.status();
  Graph g2;
  EXPECT_EQ(Sequential::Create({layers::Input({1}), *masked}, {.graph = &g2})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(layers::FromConfig("Embedding",
                                  R"({"input_dim": 3, "output_dim": 2,
                                      "embeddings_initializer": 7})")
                   .ok());
}

}  // namespace
}  // namespace graphgc
