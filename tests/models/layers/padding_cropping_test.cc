// models/layers/zero_padding{1,2}d.cc and cropping{1,2}d.cc (and what they
// share, padding_cropping.cc) through the public API: values, Keras's
// amount forms, Summary, the gradient, save/load and refusals.
#include <fstream>
#include <iterator>
#include <optional>
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
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing_internal::FloatValues;

// 1, 2, ..., n as a tensor of `dims`.
Tensor Iota(std::vector<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(i + 1));
  return Tensor::FromData<float>(TensorShape(dims), v).value();
}

Json SavedLayerConfig(const Sequential& m, const std::string& dir) {
  EXPECT_TRUE(m.Save(dir).ok());
  std::ifstream in(dir + "/config.json", std::ios::binary);
  const Json config = Json::parse(std::string(
      (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  return config["config"]["layers"][1];
}

class PaddingCroppingTest : public ::testing::Test {
 protected:
  absl::StatusOr<Sequential> Model(TensorShape in, Layer layer) {
    return Sequential::Create({layers::Input(std::move(in)), std::move(layer)},
                              {.graph = &g_});
  }
  Graph g_;
};

TEST_F(PaddingCroppingTest, ZeroPadding2DPadsTopBottomLeftRightWithAPadOp) {
  absl::StatusOr<Sequential> m =
      Model({2, 2, 1}, layers::ZeroPadding2D({1, 0, 0, 2}));
  ASSERT_TRUE(m.ok()) << m.status();
  std::optional<NodeHandle> pad = g_.FindNode("zero_padding2d/Pad");
  ASSERT_TRUE(pad.has_value());
  EXPECT_EQ(g_.Describe(*pad).value().op, "Pad");
  absl::StatusOr<Tensor> y = m->Predict(Iota({1, 2, 2, 1}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({1, 3, 4, 1}));
  EXPECT_THAT(FloatValues(*y), ElementsAreArray({0.f, 0.f, 0.f, 0.f,  //
                                                 1.f, 2.f, 0.f, 0.f,  //
                                                 3.f, 4.f, 0.f, 0.f}));
}

TEST_F(PaddingCroppingTest, ZeroPadding2DTakesKerasAmountForms) {
  // An int pads every side; (h, w) both sides of each axis.
  absl::StatusOr<Sequential> one = Model({2, 3, 2}, layers::ZeroPadding2D());
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->Predict(Iota({1, 2, 3, 2})).value().shape(),
            TensorShape({1, 4, 5, 2}));
  Graph g;
  absl::StatusOr<Sequential> two = Sequential::Create(
      {layers::Input({2, 3, 2}), layers::ZeroPadding2D({2, 0})}, {.graph = &g});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->Predict(Iota({1, 2, 3, 2})).value().shape(),
            TensorShape({1, 6, 3, 2}));
}

TEST_F(PaddingCroppingTest, ZeroPadding1DPadsTheSteps) {
  absl::StatusOr<Sequential> m = Model({2, 3}, layers::ZeroPadding1D({1, 2}));
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y = m->Predict(Iota({1, 2, 3}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({1, 5, 3}));
  EXPECT_THAT(FloatValues(*y),
              ElementsAreArray({0.f, 0.f, 0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f,
                                0.f, 0.f, 0.f, 0.f, 0.f, 0.f}));
}

TEST_F(PaddingCroppingTest, Cropping2DCutsTheEdgesWithASliceOp) {
  absl::StatusOr<Sequential> m =
      Model({3, 4, 1}, layers::Cropping2D({1, 0, 1, 2}));
  ASSERT_TRUE(m.ok()) << m.status();
  std::optional<NodeHandle> slice = g_.FindNode("cropping2d/Slice");
  ASSERT_TRUE(slice.has_value());
  EXPECT_EQ(g_.Describe(*slice).value().op, "Slice");
  absl::StatusOr<Tensor> y = m->Predict(Iota({2, 3, 4, 1}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({2, 2, 1, 1}));
  EXPECT_THAT(FloatValues(*y), ElementsAre(6.f, 10.f, 18.f, 22.f));
}

TEST_F(PaddingCroppingTest, Cropping1DCutsBothEnds) {
  absl::StatusOr<Sequential> m = Model({4, 1}, layers::Cropping1D());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(FloatValues(m->Predict(Iota({1, 4, 1})).value()),
              ElementsAre(2.f, 3.f));
}

TEST_F(PaddingCroppingTest, SummaryShowsTheNewShape) {
  absl::StatusOr<Sequential> m = Model({5, 6, 2}, layers::Cropping2D({1, 2}));
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  EXPECT_THAT(s, HasSubstr("cropping2d (Cropping2D)"));
  EXPECT_THAT(s, HasSubstr("(None, 3, 2, 2)"));
  EXPECT_THAT(s, HasSubstr("Total params: 0"));
}

TEST_F(PaddingCroppingTest,
       AFitStepThroughPaddingAndCroppingFollowsTheGradient) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({3, 3, 2}),
       layers::Conv2D(2, {1, 1}, {.activation = "tanh", .seed = 1}),
       layers::ZeroPadding2D({1, 0, 2, 1}), layers::Cropping2D({0, 1, 1, 0}),
       layers::Reshape({-1, 2}), layers::ZeroPadding1D({1}),
       layers::Cropping1D({2, 0}), layers::Flatten(),
       layers::Dense(1, {.seed = 2})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  std::vector<float> x;
  for (int i = 0; i < 2 * 18; ++i) x.push_back(((i * 7) % 11) / 5.f - 1.f);
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, Tensor::FromData<float>({2, 3, 3, 2}, x).value(),
      Tensor::FromData<float>({2, 1}, std::vector<float>{1, -1}).value(), lr);
}

TEST_F(PaddingCroppingTest, SaveWritesKerasConfigAndLoadsBack) {
  struct Case {
    TensorShape in;
    Layer layer;
    const char* field;
    Json saved;
  };
  const std::vector<Case> cases = {
      {{3, 4, 1},
       layers::ZeroPadding2D({1, 2, 0, 3}, "p"),
       "padding",
       Json::parse("[[1, 2], [0, 3]]")},
      {{3, 4, 1},
       layers::Cropping2D({1, 0}, "p"),
       "cropping",
       Json::parse("[[1, 1], [0, 0]]")},
      {{4, 2},
       layers::ZeroPadding1D({3}, "p"),
       "padding",
       Json::parse("[3, 3]")},
      {{4, 2},
       layers::Cropping1D({0, 2}, "p"),
       "cropping",
       Json::parse("[0, 2]")},
  };
  for (const Case& c : cases) {
    Graph g;
    absl::StatusOr<Sequential> m =
        Sequential::Create({layers::Input(c.in), c.layer}, {.graph = &g});
    ASSERT_TRUE(m.ok()) << m.status();
    const std::string dir = TestTempPath();
    const Json layer = SavedLayerConfig(*m, dir);
    EXPECT_EQ(layer["config"]["name"], "p");
    EXPECT_EQ(layer["config"][c.field], c.saved) << layer.dump();
    Graph g2;
    absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->layers()[1].kind(), m->layers()[1].kind());
    std::vector<int64_t> dims = {2};
    for (int i = 0; i < c.in.dims(); ++i) dims.push_back(c.in[i]);
    const Tensor x = Iota(dims);
    EXPECT_EQ(FloatValues(loaded->Predict(x).value()),
              FloatValues(m->Predict(x).value()));
  }
}

TEST_F(PaddingCroppingTest, ReadsEachKerasFormOfTheAmounts) {
  for (const char* text : {R"({"padding": 2})", R"({"padding": [2, 2]})",
                           R"({"padding": [[2, 2], [2, 2]]})"}) {
    absl::StatusOr<Layer> layer = layers::FromConfig("ZeroPadding2D", text);
    ASSERT_TRUE(layer.ok()) << text << ": " << layer.status();
    Graph g;
    absl::StatusOr<Sequential> m =
        Sequential::Create({layers::Input({1, 1, 1}), *layer}, {.graph = &g});
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->Predict(Iota({1, 1, 1, 1})).value().shape(),
              TensorShape({1, 5, 5, 1}))
        << text;
  }
}

TEST_F(PaddingCroppingTest, AConfigWithoutAmountsTakesKerasDefaults) {
  struct Case {
    const char* kind;
    TensorShape in;
    TensorShape out;
  };
  // Keras 3: ZeroPadding1D(padding=1), ZeroPadding2D(padding=(1, 1)),
  // Cropping1D(cropping=(1, 1)), Cropping2D(cropping=((0, 0), (0, 0))).
  const std::vector<Case> cases = {
      {"ZeroPadding1D", {4, 1}, {1, 6, 1}},
      {"ZeroPadding2D", {2, 2, 1}, {1, 4, 4, 1}},
      {"Cropping1D", {4, 1}, {1, 2, 1}},
      {"Cropping2D", {2, 2, 1}, {1, 2, 2, 1}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Layer> layer = layers::FromConfig(c.kind, "{}");
    ASSERT_TRUE(layer.ok()) << c.kind << ": " << layer.status();
    Graph g;
    absl::StatusOr<Sequential> m =
        Sequential::Create({layers::Input(c.in), *layer}, {.graph = &g});
    ASSERT_TRUE(m.ok()) << c.kind << ": " << m.status();
    std::vector<int64_t> dims = {1};
    for (int64_t d : c.in.dim_sizes()) dims.push_back(d);
    EXPECT_EQ(m->Predict(Iota(dims)).value().shape(), c.out) << c.kind;
  }
}

TEST_F(PaddingCroppingTest, BadAmountsAreRefusedNamingLayerAndArgument) {
  struct Bad {
    TensorShape in;
    Layer layer;
    const char* what;
  };
  const std::vector<Bad> bad = {
      {{2, 2, 1}, layers::ZeroPadding2D({-1}), "padding must be >= 0"},
      {{2, 2, 1}, layers::ZeroPadding2D({1, 2, 3}), "padding must have"},
      {{2, 2}, layers::ZeroPadding1D({1, 2, 3, 4}), "padding must have"},
      {{2, 2, 1},
       layers::Cropping2D({1, 1, 0, 0}),
       "cropping must be smaller than the input size"},
      {{3, 2},
       layers::Cropping1D({3, 0}),
       "cropping must be smaller than the input size"},
      {{4}, layers::ZeroPadding2D(), "(None, 4)"},
  };
  for (const Bad& b : bad) {
    Graph g;
    absl::StatusOr<Sequential> m =
        Sequential::Create({layers::Input(b.in), b.layer}, {.graph = &g});
    ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << b.what;
    EXPECT_THAT(m.status().message(), HasSubstr(b.layer.kind()));
    EXPECT_THAT(m.status().message(), HasSubstr(b.what));
  }
}

TEST_F(PaddingCroppingTest, ChannelsFirstIsRefusedByTheReader) {
  absl::StatusOr<Layer> layer = layers::FromConfig(
      "ZeroPadding2D", R"({"data_format": "channels_first"})");
  ASSERT_EQ(layer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(layer.status().message(), HasSubstr("data_format"));
}

}  // namespace
}  // namespace graphgc
