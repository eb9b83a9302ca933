// models/layers/up_sampling2d.cc through the public API: nearest
// repetition, Summary, the gradient, save/load and refusals.
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
#include "models/spatial_layers.h"
#include "nlohmann/json.hpp"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "tests/testing/numeric_gradient.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing_internal::FloatValues;

class UpSampling2DTest : public ::testing::Test {
 protected:
  Graph g_;
};

TEST_F(UpSampling2DTest, RepeatsEachPixelSizeTimesDownAndAcross) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2, 2, 1}), layers::UpSampling2D({2, 3})}, {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y = m->Predict(
      Tensor::FromData<float>({1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4})
          .value());
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({1, 4, 6, 1}));
  EXPECT_THAT(FloatValues(*y),
              ElementsAreArray({1.f, 1.f, 1.f, 2.f, 2.f, 2.f,  //
                                1.f, 1.f, 1.f, 2.f, 2.f, 2.f,  //
                                3.f, 3.f, 3.f, 4.f, 4.f, 4.f,  //
                                3.f, 3.f, 3.f, 4.f, 4.f, 4.f}));
}

TEST_F(UpSampling2DTest, KeepsChannelsApart) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({1, 1, 2}), layers::UpSampling2D()}, {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y = m->Predict(
      Tensor::FromData<float>({1, 1, 1, 2}, std::vector<float>{5, 7}).value());
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({1, 2, 2, 2}));
  EXPECT_THAT(FloatValues(*y),
              ElementsAreArray({5.f, 7.f, 5.f, 7.f, 5.f, 7.f, 5.f, 7.f}));
}

TEST_F(UpSampling2DTest, SummaryShowsTheUpsampledShape) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({3, 4, 2}), layers::UpSampling2D({2})}, {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  EXPECT_THAT(s, HasSubstr("up_sampling2d (UpSampling2D)"));
  EXPECT_THAT(s, HasSubstr("(None, 6, 8, 2)"));
}

TEST_F(UpSampling2DTest, AFitStepFollowsTheNumericalGradient) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2, 2, 2}),
       layers::Conv2D(2, {1, 1}, {.activation = "tanh", .seed = 1}),
       layers::UpSampling2D({2, 1}), layers::Flatten(),
       layers::Dense(1, {.seed = 2})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  std::vector<float> x;
  for (int i = 0; i < 16; ++i) x.push_back(((i * 5) % 7) / 3.f - 1.f);
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, Tensor::FromData<float>({2, 2, 2, 2}, x).value(),
      Tensor::FromData<float>({2, 1}, std::vector<float>{1, -1}).value(), lr);
}

TEST_F(UpSampling2DTest, SaveWritesKerasConfigAndLoadsBack) {
  const std::string dir = TestTempPath();
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2, 2, 1}), layers::UpSampling2D({3, 2}, "nearest", "up")},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->Save(dir).ok());
  std::ifstream in(dir + "/config.json", std::ios::binary);
  const Json config = Json::parse(std::string(
      (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  const Json& layer = config["config"]["layers"][1];
  EXPECT_EQ(layer["class_name"], "UpSampling2D");
  EXPECT_EQ(layer["config"]["name"], "up");
  EXPECT_EQ(layer["config"]["size"], Json::array({3, 2}));
  EXPECT_EQ(layer["config"]["interpolation"], "nearest");
  EXPECT_EQ(layer["config"]["data_format"], "channels_last");
  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Tensor x =
      Tensor::FromData<float>({1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4})
          .value();
  EXPECT_EQ(FloatValues(loaded->Predict(x).value()),
            FloatValues(m->Predict(x).value()));
}

TEST_F(UpSampling2DTest, BilinearIsRefused) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2, 2, 1}), layers::UpSampling2D({2}, "bilinear")},
      {.graph = &g_});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("UpSampling2D"));
  EXPECT_THAT(m.status().message(), HasSubstr("interpolation \"bilinear\""));
}

TEST_F(UpSampling2DTest, BadArgumentsAreRefusedNamingLayerAndArgument) {
  struct Case {
    Layer layer;
    const char* argument;
  };
  for (const Case& bad :
       {Case{layers::UpSampling2D({0}), "size"},
        Case{layers::UpSampling2D({2}, "closest"), "interpolation"},
        Case{layers::UpSampling2D({int64_t{1} << 40, 4}), "size"}}) {
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({2, 2, 1}), bad.layer}, {.graph = &g});
    ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(m.status().message(), HasSubstr("UpSampling2D"));
    EXPECT_THAT(m.status().message(), HasSubstr(bad.argument));
  }
}

}  // namespace
}  // namespace graphgc
