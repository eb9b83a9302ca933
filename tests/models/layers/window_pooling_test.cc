// models/layers/average_pooling2d.cc, max_pooling1d.cc, average_pooling1d.cc
// (and what they share, window_pooling.cc): the window pooling kinds of
// models/spatial_layers.h through the public API, their values against
// loops over the input, Keras's examples, Summary, the gradient, save/load
// and refusals.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
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

// A layer of the kind under test with a square window `k`, stride `s` (0:
// the default) and `padding`.
struct PoolCase {
  const char* class_name;
  const char* default_name;
  int spatial;
  bool max;
  Layer (*make)(int64_t k, int64_t s, const std::string& padding,
                const std::string& name);
};

void PrintTo(const PoolCase& c, std::ostream* os) { *os << c.class_name; }

Layer MakeAverage2D(int64_t k, int64_t s, const std::string& padding,
                    const std::string& name) {
  return layers::AveragePooling2D(
      {k},
      {.strides = s == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{s},
       .padding = padding,
       .name = name});
}
Layer MakeMax1D(int64_t k, int64_t s, const std::string& padding,
                const std::string& name) {
  return layers::MaxPooling1D(
      k, {.strides = s == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{s},
          .padding = padding,
          .name = name});
}
Layer MakeAverage1D(int64_t k, int64_t s, const std::string& padding,
                    const std::string& name) {
  return layers::AveragePooling1D(
      k, {.strides = s == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{s},
          .padding = padding,
          .name = name});
}

class WindowPoolingTest : public ::testing::TestWithParam<PoolCase> {
 protected:
  // Per-sample shape: [5, 2] (1D) or [4, 5, 2] (2D), 2 channels.
  TensorShape SampleShape() const {
    return GetParam().spatial == 1 ? TensorShape({5, 2})
                                   : TensorShape({4, 5, 2});
  }
  int64_t Height() const { return GetParam().spatial == 1 ? 1 : 4; }
  Tensor Input(int64_t batch, uint32_t seed) const {
    std::vector<int64_t> dims = {batch};
    for (int i = 0; i < SampleShape().dims(); ++i)
      dims.push_back(SampleShape()[i]);
    std::vector<float> v;
    const int64_t n = batch * SampleShape().num_elements();
    for (int64_t i = 0; i < n; ++i) {
      v.push_back(static_cast<float>(((i * 7 + seed) % 11)) - 5.f);
    }
    return Tensor::FromData<float>(TensorShape(dims), v).value();
  }
  // The pooled values by loops: window k, stride s over [h, 5, 2] images,
  // SAME padding as TensorFlow (before = total / 2, padding not counted).
  std::vector<float> Expected(const Tensor& x, int64_t k, int64_t s,
                              bool same) const {
    const std::vector<float> v = FloatValues(x);
    const int64_t h = Height(), w = 5, c = 2, batch = x.shape()[0];
    const int64_t kh = GetParam().spatial == 1 ? 1 : k;
    const int64_t sh = GetParam().spatial == 1 ? 1 : s;
    auto out_size = [&](int64_t in, int64_t kk, int64_t ss) {
      return same ? (in + ss - 1) / ss : (in - kk) / ss + 1;
    };
    auto pad = [&](int64_t in, int64_t kk, int64_t ss) {
      return same ? std::max<int64_t>((out_size(in, kk, ss) - 1) * ss + kk - in,
                                      0) /
                        2
                  : 0;
    };
    const int64_t oh = out_size(h, kh, sh), ow = out_size(w, k, s);
    const int64_t ph = pad(h, kh, sh), pw = pad(w, k, s);
    std::vector<float> out;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          for (int64_t ch = 0; ch < c; ++ch) {
            float acc =
                GetParam().max ? -std::numeric_limits<float>::infinity() : 0.f;
            int count = 0;
            for (int64_t y = oy * sh - ph; y < oy * sh - ph + kh; ++y) {
              for (int64_t xx = ox * s - pw; xx < ox * s - pw + k; ++xx) {
                if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
                const float e = v[((b * h + y) * w + xx) * c + ch];
                acc = GetParam().max ? std::max(acc, e) : acc + e;
                ++count;
              }
            }
            out.push_back(GetParam().max ? acc : acc / count);
          }
        }
      }
    }
    return out;
  }
  Graph g_;
};

TEST_P(WindowPoolingTest, IsARegisteredKindWithKerasArguments) {
  for (const layers::LayerKindInfo& kind : layers::RegisteredKinds()) {
    if (kind.class_name != GetParam().class_name) continue;
    std::vector<std::string> names;
    for (const auto& f : kind.fields) names.push_back(f.name);
    EXPECT_THAT(names, ElementsAre("pool_size", "strides", "padding",
                                   "data_format", "name"));
    return;
  }
  ADD_FAILURE() << GetParam().class_name << " is not registered";
}

TEST_P(WindowPoolingTest, PoolsEachWindowWithStridesDefaultingToThePoolSize) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input(SampleShape()), GetParam().make(2, 0, "valid", "")},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const Tensor x = Input(2, 3);
  absl::StatusOr<Tensor> y = m->Predict(x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), GetParam().spatial == 1 ? TensorShape({2, 2, 2})
                                                : TensorShape({2, 2, 2, 2}));
  EXPECT_THAT(FloatValues(*y), ::testing::Pointwise(::testing::FloatEq(),
                                                    Expected(x, 2, 2, false)));
}

TEST_P(WindowPoolingTest, SamePaddingLeavesThePaddingOutOfEachWindow) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input(SampleShape()), GetParam().make(3, 2, "same", "")},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const Tensor x = Input(2, 4);
  absl::StatusOr<Tensor> y = m->Predict(x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), GetParam().spatial == 1 ? TensorShape({2, 3, 2})
                                                : TensorShape({2, 2, 3, 2}));
  EXPECT_THAT(FloatValues(*y), ::testing::Pointwise(::testing::FloatNear(1e-5),
                                                    Expected(x, 3, 2, true)));
}

TEST_P(WindowPoolingTest, SummaryShowsThePooledShapeWithoutParams) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input(SampleShape()), GetParam().make(2, 1, "valid", "")},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  EXPECT_THAT(s, HasSubstr(absl::StrCat(GetParam().default_name, " (")));
  EXPECT_THAT(s, HasSubstr(GetParam().spatial == 1 ? "(None, 4, 2)"
                                                   : "(None, 3, 4, 2)"));
  EXPECT_THAT(s, HasSubstr("Total params: 0"));
}

TEST_P(WindowPoolingTest, AFitStepFollowsTheNumericalGradient) {
  // A Dense before the pooling, so its kernel's gradient goes through it.
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input(SampleShape()),
       GetParam().spatial == 1
           ? layers::Conv1D(2, 1, {.activation = "tanh", .seed = 1})
           : layers::Conv2D(2, {1, 1}, {.activation = "tanh", .seed = 1}),
       GetParam().make(3, 2, "same", ""), layers::Flatten(),
       layers::Dense(1, {.seed = 2})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, Input(2, 1),
      Tensor::FromData<float>({2, 1}, std::vector<float>{1, -1}).value(), lr);
}

TEST_P(WindowPoolingTest, SaveWritesKerasConfigAndLoadsBack) {
  const std::string dir = TestTempPath();
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input(SampleShape()), GetParam().make(3, 1, "same", "pool")},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->Save(dir).ok());
  std::ifstream in(dir + "/config.json", std::ios::binary);
  const Json config = Json::parse(std::string(
      (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  const Json& layer = config["config"]["layers"][1];
  EXPECT_EQ(layer["class_name"], GetParam().class_name);
  const Json& c = layer["config"];
  EXPECT_EQ(c["name"], "pool");
  const Json size =
      GetParam().spatial == 1 ? Json::array({3}) : Json::array({3, 3});
  const Json one =
      GetParam().spatial == 1 ? Json::array({1}) : Json::array({1, 1});
  EXPECT_EQ(c["pool_size"], size);
  EXPECT_EQ(c["strides"], one);
  EXPECT_EQ(c["padding"], "same");
  EXPECT_EQ(c["data_format"], "channels_last");
  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->layers()[1].kind(), GetParam().class_name);
  const Tensor x = Input(1, 2);
  EXPECT_EQ(FloatValues(loaded->Predict(x).value()),
            FloatValues(m->Predict(x).value()));
}

TEST_P(WindowPoolingTest, ReadsNullStridesAsThePoolSize) {
  absl::StatusOr<Layer> layer = layers::FromConfig(
      GetParam().class_name, R"({"pool_size": 2, "strides": null})");
  ASSERT_TRUE(layer.ok()) << layer.status();
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input(SampleShape()), *layer}, {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const Tensor x = Input(1, 6);
  EXPECT_THAT(
      FloatValues(m->Predict(x).value()),
      ::testing::Pointwise(::testing::FloatEq(), Expected(x, 2, 2, false)));
}

TEST_P(WindowPoolingTest, ChannelsFirstIsRefusedByTheReader) {
  absl::StatusOr<Layer> layer = layers::FromConfig(
      GetParam().class_name,
      R"({"pool_size": 2, "data_format": "channels_first"})");
  ASSERT_EQ(layer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(layer.status().message(), HasSubstr("data_format"));
}

TEST_P(WindowPoolingTest, BadArgumentsAreRefusedNamingLayerAndArgument) {
  struct Bad {
    Layer layer;
    const char* what;
  };
  const std::vector<Bad> bad = {
      {GetParam().make(0, 0, "valid", ""), "pool_size must be >= 1"},
      {GetParam().make(2, -1, "valid", ""), "strides must be >= 1"},
      {GetParam().make(2, 0, "SAME", ""), "padding must be"},
      {GetParam().make(6, 0, "valid", ""), "does not fit inputs"},
  };
  for (const Bad& b : bad) {
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input(SampleShape()), b.layer}, {.graph = &g});
    ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << b.what;
    EXPECT_THAT(m.status().message(), HasSubstr(GetParam().class_name));
    EXPECT_THAT(m.status().message(), HasSubstr(b.what));
  }
}

TEST_P(WindowPoolingTest, AnotherRankIsRefused) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({10}), GetParam().make(2, 0, "valid", "")},
      {.graph = &g_});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr(GetParam().class_name));
  EXPECT_THAT(m.status().message(), HasSubstr("(None, 10)"));
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, WindowPoolingTest,
    ::testing::Values(PoolCase{"AveragePooling2D", "average_pooling2d", 2,
                               false, MakeAverage2D},
                      PoolCase{"MaxPooling1D", "max_pooling1d", 1, true,
                               MakeMax1D},
                      PoolCase{"AveragePooling1D", "average_pooling1d", 1,
                               false, MakeAverage1D}),
    [](const ::testing::TestParamInfo<PoolCase>& info) {
      return std::string(info.param.class_name);
    });

// Keras's docstring example: AveragePooling2D((2, 2), strides (1, 1),
// "same") over [[1, 2, 3], [4, 5, 6], [7, 8, 9]].
TEST(AveragePooling2DTest, MatchesKerasSamePaddingExample) {
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({3, 3, 1}),
                          layers::AveragePooling2D(
                              {2, 2}, {.strides = {1, 1}, .padding = "same"})},
                         {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  const Tensor x =
      Tensor::FromData<float>({1, 3, 3, 1},
                              std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9})
          .value();
  EXPECT_THAT(
      FloatValues(m->Predict(x).value()),
      ElementsAreArray({3.f, 4.f, 4.5f, 6.f, 7.f, 7.5f, 7.5f, 8.5f, 9.f}));
}

TEST(AveragePooling2DTest, UsesAnAvgPoolOp) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({4, 4, 1}), layers::AveragePooling2D({2, 2})},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  std::optional<NodeHandle> pool = g.FindNode("average_pooling2d/AvgPool");
  ASSERT_TRUE(pool.has_value());
  EXPECT_EQ(g.Describe(*pool).value().op, "AvgPool");
}

}  // namespace
}  // namespace graphgc
