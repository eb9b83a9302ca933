// models/layers/conv2d_transpose.cc through the public API: Keras's output
// shapes and kernel shape, values against a scatter-add loop, Summary, the
// gradient, save/load and refusals.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/functional.h"
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

// Keras's compute_conv_transpose_output_shape, output_padding None.
int64_t KerasSide(int64_t in, int64_t k, int64_t s, const std::string& pad) {
  return pad == "same" ? in * s : (in - 1) * s + std::max(k, s);
}

// Each input pixel scatters x[b, i, j, c] * w[ky, kx, f, c] onto
// y[b, i * s + ky - before, j * s + kx - before, f], `before` the padding
// TensorFlow puts in front of the convolution this one transposes.
std::vector<float> Reference(const Tensor& x, const Tensor& w, int64_t s,
                             const std::string& padding, int64_t out_h,
                             int64_t out_w) {
  const std::vector<float> xv = FloatValues(x), wv = FloatValues(w);
  const int64_t batch = x.shape()[0], h = x.shape()[1], wd = x.shape()[2];
  const int64_t in = x.shape()[3];
  const int64_t kh = w.shape()[0], kw = w.shape()[1], f = w.shape()[2];
  const auto before = [&](int64_t size, int64_t out, int64_t k) -> int64_t {
    if (padding != "same") return 0;
    return std::max<int64_t>((size - 1) * s + k - out, 0) / 2;
  };
  const int64_t top = before(h, out_h, kh), left = before(wd, out_w, kw);
  std::vector<double> y(batch * out_h * out_w * f, 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < wd; ++j)
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t oy = i * s + ky - top, ox = j * s + kx - left;
            if (oy < 0 || oy >= out_h || ox < 0 || ox >= out_w) continue;
            for (int64_t o = 0; o < f; ++o)
              for (int64_t c = 0; c < in; ++c) {
                y[((b * out_h + oy) * out_w + ox) * f + o] +=
                    xv[((b * h + i) * wd + j) * in + c] *
                    wv[((ky * kw + kx) * f + o) * in + c];
              }
          }
  return std::vector<float>(y.begin(), y.end());
}

struct Case {
  int64_t kernel;
  int64_t stride;
  const char* padding;
};
// Both paddings at strides 1 and 2, and a stride larger than the kernel
// (Keras's max(k, stride) under "valid").
const Case kCases[] = {{3, 1, "valid"}, {3, 2, "valid"}, {3, 1, "same"},
                       {3, 2, "same"},  {2, 3, "valid"}, {2, 3, "same"}};

class Conv2DTransposeTest : public ::testing::Test {
 protected:
  Graph g_;
};

TEST_F(Conv2DTransposeTest, OutputShapeFollowsKerasFormula) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(::testing::Message()
                 << c.kernel << " " << c.stride << " " << c.padding);
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({4, 5, 2}),
         layers::Conv2DTranspose(
             3, {c.kernel}, {.strides = {c.stride}, .padding = c.padding})},
        {.graph = &g});
    ASSERT_TRUE(m.ok()) << m.status();
    absl::StatusOr<Tensor> y = m->Predict(Values({2, 4, 5, 2}, 1));
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->shape(),
              TensorShape({2, KerasSide(4, c.kernel, c.stride, c.padding),
                           KerasSide(5, c.kernel, c.stride, c.padding), 3}));
  }
}

TEST_F(Conv2DTransposeTest, HasKerasKernelShapeAndMatchesAScatterAddLoop) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(::testing::Message()
                 << c.kernel << " " << c.stride << " " << c.padding);
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({3, 4, 2}),
         layers::Conv2DTranspose(3, {c.kernel, c.kernel},
                                 {.strides = {c.stride, c.stride},
                                  .padding = c.padding,
                                  .seed = 3})},
        {.graph = &g});
    ASSERT_TRUE(m.ok()) << m.status();
    const std::vector<Tensor> w = m->GetWeights();
    ASSERT_EQ(w.size(), 2u);
    // [kh, kw, filters, in_channels].
    EXPECT_EQ(w[0].shape(), TensorShape({c.kernel, c.kernel, 3, 2}));
    EXPECT_EQ(w[1].shape(), TensorShape({3}));
    const Tensor x = Values({2, 3, 4, 2}, 1);
    absl::StatusOr<Tensor> y = m->Predict(x);
    ASSERT_TRUE(y.ok()) << y.status();
    const int64_t oh = KerasSide(3, c.kernel, c.stride, c.padding);
    const int64_t ow = KerasSide(4, c.kernel, c.stride, c.padding);
    EXPECT_THAT(
        FloatValues(*y),
        ::testing::Pointwise(::testing::FloatNear(1e-5),
                             Reference(x, w[0], c.stride, c.padding, oh, ow)));
  }
}

TEST_F(Conv2DTransposeTest, SummaryCountsKernelAndBias) {
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({4, 4, 3}),
                          layers::Conv2DTranspose(8, {3}, {.name = "t"})},
                         {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  EXPECT_THAT(s, HasSubstr("t (Conv2DTranspose)"));
  EXPECT_THAT(s, HasSubstr("(None, 6, 6, 8)"));
  // 3 * 3 * 8 * 3 + 8.
  EXPECT_THAT(s, HasSubstr("Total params: 224"));
}

// The Conv2D in front gets its gradient through the transpose's gradient
// with respect to its input; the transposes' kernels through theirs.
TEST_F(Conv2DTransposeTest, AFitStepFollowsTheNumericalGradient) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({3, 3, 2}),
       layers::Conv2D(2, {2}, {.padding = "same", .seed = 5}),
       layers::Conv2DTranspose(
           3, {2}, {.strides = {2}, .activation = "tanh", .seed = 1}),
       layers::Conv2DTranspose(2, {3}, {.padding = "same", .seed = 4}),
       layers::Flatten(), layers::Dense(1, {.seed = 2})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, Values({2, 3, 3, 2}, 2),
      Tensor::FromData<float>({2, 1}, std::vector<float>{1, -1}).value(), lr);
}

TEST_F(Conv2DTransposeTest, SaveWritesKerasConfigAndLoadsBack) {
  const std::string dir = TestTempPath();
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({3, 3, 2}), layers::Conv2DTranspose(4, {3, 2},
                                                         {.strides = {2, 1},
                                                          .padding = "same",
                                                          .activation = "relu",
                                                          .name = "t"})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->Save(dir).ok());
  std::ifstream in(dir + "/config.json", std::ios::binary);
  const Json config = Json::parse(std::string(
      (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  const Json& c = config["config"]["layers"][1]["config"];
  EXPECT_EQ(config["config"]["layers"][1]["class_name"], "Conv2DTranspose");
  EXPECT_EQ(c["filters"], 4);
  EXPECT_EQ(c["kernel_size"], Json::array({3, 2}));
  EXPECT_EQ(c["strides"], Json::array({2, 1}));
  EXPECT_EQ(c["padding"], "same");
  EXPECT_TRUE(c["output_padding"].is_null());
  EXPECT_EQ(c["dilation_rate"], Json::array({1, 1}));
  EXPECT_EQ(c["activation"], "relu");
  EXPECT_FALSE(c.contains("groups"));
  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Tensor x = Values({1, 3, 3, 2}, 5);
  EXPECT_EQ(FloatValues(loaded->Predict(x).value()),
            FloatValues(m->Predict(x).value()));
}

TEST_F(Conv2DTransposeTest, BadArgumentsAreRefusedNamingLayerAndArgument) {
  struct Bad {
    Layer layer;
    const char* what;
  };
  const std::vector<Bad> bad = {
      {layers::Conv2DTranspose(0, {3}), "filters must be >= 1"},
      {layers::Conv2DTranspose(2, {0}), "kernel_size"},
      {layers::Conv2DTranspose(2, {3}, {.strides = {0}}), "strides"},
      {layers::Conv2DTranspose(2, {3}, {.padding = "causal"}),
       "padding must be"},
      {layers::Conv2DTranspose(2, {3}, {.activation = "nope"}),
       "unknown activation"},
  };
  for (const Bad& b : bad) {
    Graph g;
    absl::StatusOr<Sequential> m =
        Sequential::Create({layers::Input({4, 4, 2}), b.layer}, {.graph = &g});
    ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << b.what;
    EXPECT_THAT(m.status().message(), HasSubstr("Conv2DTranspose"));
    EXPECT_THAT(m.status().message(), HasSubstr(b.what));
  }
}

TEST_F(Conv2DTransposeTest, OptionsGraphgcLacksAreRefusedByTheReader) {
  for (
      const char* config :
      {R"({"filters": 2, "kernel_size": 3, "output_padding": [1, 1]})",
       R"({"filters": 2, "kernel_size": 3, "dilation_rate": [2, 2]})",
       R"({"filters": 2, "kernel_size": 3, "data_format": "channels_first"})"}) {
    SCOPED_TRACE(config);
    absl::StatusOr<Layer> layer = layers::FromConfig("Conv2DTranspose", config);
    ASSERT_EQ(layer.status().code(), absl::StatusCode::kInvalidArgument);
    const Json j = Json::parse(config);
    for (const char* key : {"output_padding", "dilation_rate", "data_format"}) {
      if (j.contains(key)) {
        EXPECT_THAT(layer.status().message(), HasSubstr(key));
      }
    }
  }
}

}  // namespace
}  // namespace graphgc
