// models/layers/conv1d.cc through the public API: values against a loop,
// Keras's kernel shape, causal padding, Summary, the gradient, save/load
// and refusals.
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
using ::testing::HasSubstr;
using testing_internal::FloatValues;

Tensor Values(std::vector<int64_t> dims, int seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) {
    v.push_back(static_cast<float>((i * 7 + seed) % 11) / 5.f - 1.f);
  }
  return Tensor::FromData<float>(TensorShape(dims), v).value();
}

// y[b, t, f] = sum_k,c x[b, t * s + k - pad, c] * w[k, c, f] (+ bias 0).
std::vector<float> Reference(const Tensor &x, const Tensor &w, int64_t s,
                             int64_t pad, int64_t out_steps) {
  const std::vector<float> xv = FloatValues(x), wv = FloatValues(w);
  const int64_t batch = x.shape()[0], steps = x.shape()[1], in = x.shape()[2];
  const int64_t k = w.shape()[0], f = w.shape()[2];
  std::vector<float> out;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < out_steps; ++t)
      for (int64_t o = 0; o < f; ++o) {
        double acc = 0;
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = t * s + j - pad;
          if (at < 0 || at >= steps) continue;
          for (int64_t c = 0; c < in; ++c) {
            acc += xv[(b * steps + at) * in + c] * wv[(j * in + c) * f + o];
          }
        }
        out.push_back(static_cast<float>(acc));
      }
  return out;
}

class Conv1DTest : public ::testing::Test {
 protected:
  Graph g_;
};

TEST_F(Conv1DTest, HasKerasKernelShapeAndMatchesALoop) {
  struct Case {
    int64_t stride;
    const char *padding;
    int64_t pad;  // zeros in front
    int64_t out_steps;
  };
  for (const Case &c :
       // SAME at stride 2 over 7 steps pads (4 - 1) * 2 + 3 - 7 = 2 in
       // all, TensorFlow's half (1) in front.
       {Case{1, "valid", 0, 5}, Case{2, "valid", 0, 3}, Case{2, "same", 1, 4},
        Case{1, "causal", 2, 7}, Case{3, "causal", 2, 3}}) {
    SCOPED_TRACE(c.padding);
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({7, 2}),
         layers::Conv1D(
             4, 3, {.strides = c.stride, .padding = c.padding, .seed = 3})},
        {.graph = &g});
    ASSERT_TRUE(m.ok()) << m.status();
    const std::vector<Tensor> w = m->GetWeights();
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[0].shape(), TensorShape({3, 2, 4}));
    EXPECT_EQ(w[1].shape(), TensorShape({4}));
    const Tensor x = Values({2, 7, 2}, 1);
    absl::StatusOr<Tensor> y = m->Predict(x);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->shape(), TensorShape({2, c.out_steps, 4}));
    EXPECT_THAT(
        FloatValues(*y),
        ::testing::Pointwise(::testing::FloatNear(1e-5),
                             Reference(x, w[0], c.stride, c.pad, c.out_steps)));
  }
}

TEST_F(Conv1DTest, SummaryCountsKernelAndBias) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({10, 3}), layers::Conv1D(8, 5, {.padding = "same"})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  EXPECT_THAT(s, HasSubstr("conv1d (Conv1D)"));
  EXPECT_THAT(s, HasSubstr("(None, 10, 8)"));
  // 5 * 3 * 8 + 8.
  EXPECT_THAT(s, HasSubstr("Total params: 128"));
}

TEST_F(Conv1DTest, AFitStepFollowsTheNumericalGradient) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({6, 2}),
       layers::Conv1D(3, 2,
                      {.padding = "causal", .activation = "tanh", .seed = 1}),
       layers::Conv1D(2, 3, {.strides = 2, .padding = "same", .seed = 4}),
       layers::Flatten(), layers::Dense(1, {.seed = 2})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, Values({2, 6, 2}, 2),
      Tensor::FromData<float>({2, 1}, std::vector<float>{1, -1}).value(), lr);
}

TEST_F(Conv1DTest, SaveWritesKerasConfigAndLoadsBack) {
  const std::string dir = TestTempPath();
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({7, 2}), layers::Conv1D(4, 3,
                                             {.strides = 2,
                                              .padding = "causal",
                                              .activation = "relu",
                                              .name = "c"})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->Save(dir).ok());
  std::ifstream in(dir + "/config.json", std::ios::binary);
  const Json config = Json::parse(std::string(
      (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  const Json &c = config["config"]["layers"][1]["config"];
  EXPECT_EQ(config["config"]["layers"][1]["class_name"], "Conv1D");
  EXPECT_EQ(c["filters"], 4);
  EXPECT_EQ(c["kernel_size"], Json::array({3}));
  EXPECT_EQ(c["strides"], Json::array({2}));
  EXPECT_EQ(c["padding"], "causal");
  EXPECT_EQ(c["dilation_rate"], Json::array({1}));
  EXPECT_EQ(c["activation"], "relu");
  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Tensor x = Values({1, 7, 2}, 5);
  EXPECT_EQ(FloatValues(loaded->Predict(x).value()),
            FloatValues(m->Predict(x).value()));
}

TEST_F(Conv1DTest, BadArgumentsAreRefusedNamingLayerAndArgument) {
  struct Bad {
    Layer layer;
    const char *what;
  };
  const std::vector<Bad> bad = {
      {layers::Conv1D(0, 3), "filters must be >= 1"},
      {layers::Conv1D(2, 0), "kernel_size must be >= 1"},
      {layers::Conv1D(2, 3, {.strides = 0}), "strides must be >= 1"},
      {layers::Conv1D(2, 3, {.padding = "full"}), "padding must be"},
      {layers::Conv1D(2, 3, {.activation = "nope"}), "unknown activation"},
      {layers::Conv1D(2, 9), "does not fit inputs"},
  };
  for (const Bad &b : bad) {
    Graph g;
    absl::StatusOr<Sequential> m =
        Sequential::Create({layers::Input({7, 2}), b.layer}, {.graph = &g});
    ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << b.what;
    EXPECT_THAT(m.status().message(), HasSubstr("Conv1D"));
    EXPECT_THAT(m.status().message(), HasSubstr(b.what));
  }
}

TEST_F(Conv1DTest, DilationOtherThanOneIsRefusedByTheReader) {
  absl::StatusOr<Layer> layer = layers::FromConfig(
      "Conv1D", R"({"filters": 2, "kernel_size": 3, "dilation_rate": [2]})");
  ASSERT_EQ(layer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(layer.status().message(), HasSubstr("dilation_rate"));
}

}  // namespace
}  // namespace graphgc
