// models/layers/global_{average,max}_pooling{1,2}d.cc (and what they share,
// global_pooling.cc): the four global pooling kinds through the public API,
// their values against loops over the input, Summary, save/load, refusals
// and training.
#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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
#include "tests/testing/numeric_gradient.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using testing_internal::FloatValues;

struct PoolCase {
  const char* class_name;
  const char* default_name;
  Layer (*make)(GlobalPoolingOptions);
  int spatial;  // 1: [steps, c], 2: [h, w, c]
  bool max;
};

void PrintTo(const PoolCase& c, std::ostream* os) { *os << c.class_name; }

class GlobalPoolingTest : public ::testing::TestWithParam<PoolCase> {
 protected:
  // Per-sample shape: [3, 2] (1D) or [3, 2, 2] (2D, height 3, width 2),
  // always 2 channels.
  TensorShape SampleShape() const {
    return GetParam().spatial == 1 ? TensorShape({3, 2})
                                   : TensorShape({3, 2, 2});
  }
  std::vector<int64_t> BatchDims(int64_t batch) const {
    std::vector<int64_t> d = {batch};
    for (int i = 0; i < SampleShape().dims(); ++i)
      d.push_back(SampleShape()[i]);
    return d;
  }
  Tensor Input(int64_t batch, uint32_t seed) const {
    std::vector<float> v;
    const int64_t n = batch * SampleShape().num_elements();
    for (int64_t i = 0; i < n; ++i) {
      v.push_back(static_cast<float>(((i * 7 + seed) % 11)) - 5.f);
    }
    return Tensor::FromData<float>(TensorShape(BatchDims(batch)), v).value();
  }
  // The pooled [batch, channels] values, by loops.
  std::vector<float> Expected(const Tensor& x) const {
    const std::vector<float> v = FloatValues(x);
    const int64_t channels = 2;
    const int64_t positions = SampleShape().num_elements() / channels;
    const int64_t batch = x.shape()[0];
    std::vector<float> out;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t c = 0; c < channels; ++c) {
        float acc =
            GetParam().max ? -std::numeric_limits<float>::infinity() : 0.f;
        for (int64_t p = 0; p < positions; ++p) {
          const float e = v[(b * positions + p) * channels + c];
          acc = GetParam().max ? std::max(acc, e) : acc + e;
        }
        out.push_back(GetParam().max ? acc : acc / positions);
      }
    }
    return out;
  }
  Graph g_;
};

TEST_P(GlobalPoolingTest, IsARegisteredKindWithKerasArguments) {
  for (const layers::LayerKindInfo& kind : layers::RegisteredKinds()) {
    if (kind.class_name != GetParam().class_name) continue;
    std::vector<std::string> names;
    for (const auto& f : kind.fields) names.push_back(f.name);
    EXPECT_THAT(names,
                ::testing::ElementsAre("data_format", "keepdims", "name"));
    return;
  }
  ADD_FAILURE() << GetParam().class_name << " is not registered";
}

TEST_P(GlobalPoolingTest, PoolsEachChannelOverTheSpatialAxes) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input(SampleShape()), GetParam().make({})}, {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const Tensor x = Input(2, 3);
  absl::StatusOr<Tensor> y = m->Predict(x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({2, 2}));
  EXPECT_THAT(FloatValues(*y),
              ::testing::Pointwise(::testing::FloatEq(), Expected(x)));
}

TEST_P(GlobalPoolingTest, KeepdimsKeepsThePooledAxesAsOnes) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input(SampleShape()), GetParam().make({.keepdims = true})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const Tensor x = Input(2, 5);
  absl::StatusOr<Tensor> y = m->Predict(x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), GetParam().spatial == 1 ? TensorShape({2, 1, 2})
                                                : TensorShape({2, 1, 1, 2}));
  EXPECT_THAT(FloatValues(*y),
              ::testing::Pointwise(::testing::FloatEq(), Expected(x)));
}

TEST_P(GlobalPoolingTest, AnotherRankIsRefusedWithKerasNdimMessage) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({10}), GetParam().make({})}, {.graph = &g_});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(),
              HasSubstr(absl::StrCat("expected ndim=", GetParam().spatial + 2,
                                     ", found ndim=2. Full shape received: "
                                     "(None, 10)")));
}

TEST_P(GlobalPoolingTest, SummaryHasItsRowWithoutParams) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input(SampleShape()), GetParam().make({}), layers::Dense(3)},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  // The name column wraps the class name.
  EXPECT_THAT(s, HasSubstr(absl::StrCat(GetParam().default_name, " (")));
  EXPECT_THAT(s, HasSubstr("(None, 2)"));
  // Keras: the Dense on 2 channels has 2 * 3 + 3 = 9; the pooling none.
  EXPECT_THAT(s, HasSubstr("Total params: 9"));
}

TEST_P(GlobalPoolingTest, AFitStepFollowsTheNumericalGradient) {
  // A 1x1 convolution before the pooling, so its kernel's gradient goes
  // through it (a 1D input seen as [steps, 1, c] around it).
  std::vector<Layer> stack = {layers::Input(SampleShape())};
  if (GetParam().spatial == 1) stack.push_back(layers::Reshape({3, 1, 2}));
  stack.push_back(layers::Conv2D(2, {1, 1}, {.activation = "tanh", .seed = 1}));
  if (GetParam().spatial == 1) stack.push_back(layers::Reshape({3, 2}));
  stack.push_back(GetParam().make({}));
  stack.push_back(layers::Dense(1, {.seed = 2}));
  absl::StatusOr<Sequential> m = Sequential::Create(stack, {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, Input(2, 1),
      Tensor::FromData<float>({2, 1}, std::vector<float>{1, -1}).value(), lr);
}

TEST_P(GlobalPoolingTest, SaveWritesKerasConfigAndLoadsBack) {
  const std::string dir = TestTempPath();
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input(SampleShape()),
                          GetParam().make({.keepdims = true, .name = "pool"})},
                         {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->Save(dir).ok());
  std::ifstream in(dir + "/config.json", std::ios::binary);
  const Json config = Json::parse(std::string(
      (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  const Json& layer = config["config"]["layers"][1];
  EXPECT_EQ(layer["class_name"], GetParam().class_name);
  EXPECT_EQ(layer["config"]["name"], "pool");
  EXPECT_EQ(layer["config"]["data_format"], "channels_last");
  EXPECT_EQ(layer["config"]["keepdims"], true);
  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->layers()[1].kind(), GetParam().class_name);
  const Tensor x = Input(1, 2);
  EXPECT_EQ(FloatValues(loaded->Predict(x).value()),
            FloatValues(m->Predict(x).value()));
}

TEST_P(GlobalPoolingTest, ChannelsFirstIsRefusedByTheReader) {
  absl::StatusOr<Layer> layer = layers::FromConfig(
      GetParam().class_name, R"({"data_format": "channels_first"})");
  ASSERT_EQ(layer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(layer.status().message(), HasSubstr("data_format"));
  EXPECT_TRUE(
      layers::FromConfig(GetParam().class_name, R"({"data_format": null})")
          .ok());
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, GlobalPoolingTest,
    ::testing::Values(PoolCase{"GlobalAveragePooling2D",
                               "global_average_pooling2d",
                               layers::GlobalAveragePooling2D, 2, false},
                      PoolCase{"GlobalMaxPooling2D", "global_max_pooling2d",
                               layers::GlobalMaxPooling2D, 2, true},
                      PoolCase{"GlobalAveragePooling1D",
                               "global_average_pooling1d",
                               layers::GlobalAveragePooling1D, 1, false},
                      PoolCase{"GlobalMaxPooling1D", "global_max_pooling1d",
                               layers::GlobalMaxPooling1D, 1, true}),
    [](const ::testing::TestParamInfo<PoolCase>& info) {
      return std::string(info.param.class_name);
    });

}  // namespace
}  // namespace graphgc
