// Helpers for the tests of layer kinds without variables of their own
// (tests/models/layers/): a model of one layer on one row, a gradient check
// of a layer between two Dense layers, and a save/load round trip.
#ifndef GRAPHGC_TESTS_TESTING_LAYER_MODELS_H_
#define GRAPHGC_TESTS_TESTING_LAYER_MODELS_H_

#include <cmath>
#include <cstdint>
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
#include "tests/testing/file_bytes.h"
#include "tests/testing/numeric_gradient.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace testing_internal {

using Json = nlohmann::json;

inline Json ReadJson(const std::string& path) {
  return Json::parse(ReadFileBytes(path));
}

inline Tensor T(TensorShape shape, std::vector<float> values) {
  absl::StatusOr<Tensor> t = Tensor::FromData<float>(shape, values);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

inline Layer Make(const std::string& kind, const std::string& config) {
  absl::StatusOr<Layer> layer = layers::FromConfig(kind, config);
  EXPECT_TRUE(layer.ok()) << layer.status();
  return layer.ok() ? *layer : Layer();
}

// The outputs of a model of `layer` alone on one row `x`.
inline std::vector<float> Predict1(Layer layer, const std::vector<float>& x) {
  Graph g;
  const int64_t n = static_cast<int64_t>(x.size());
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({n}), layer}, {.graph = &g});
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  absl::StatusOr<Tensor> y = m->Predict(T({1, n}, x));
  EXPECT_TRUE(y.ok()) << y.status();
  return y.ok() ? FloatValues(*y) : std::vector<float>{};
}

// That `layer` behind a Dense layer trains along the numerical gradient.
inline void ExpectGradientThrough(Layer layer) {
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({2}), layers::Dense(3, {.seed = 5}),
                          layer, layers::Dense(1, {.seed = 6})},
                         {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, T({3, 2}, {1, -2, 0.5, 1.5, -1, -0.5}), T({3, 1}, {1, -1, 0.5}), lr);
}

// Saves a model of `layer` on rows of `n`, returns the layer's config.json
// object and checks the loaded model predicts as the saved one on `x`.
inline Json SaveAndReload(Layer layer, const std::vector<float>& x) {
  const std::string dir = TestTempPath();
  const int64_t n = static_cast<int64_t>(x.size());
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({n}), layer}, {.graph = &g});
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return Json();
  EXPECT_TRUE(m->Save(dir).ok());
  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return Json();
  EXPECT_EQ(loaded->layers()[1].kind(), layer.kind());
  absl::StatusOr<Tensor> a = m->Predict(T({1, n}, x));
  absl::StatusOr<Tensor> b = loaded->Predict(T({1, n}, x));
  EXPECT_TRUE(a.ok() && b.ok());
  if (a.ok() && b.ok()) {
    EXPECT_EQ(FloatValues(*a), FloatValues(*b));
  }
  return ReadJson(dir + "/config.json")["config"]["layers"][1];
}

inline void ExpectNear(const std::vector<float>& got,
                       const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-6 * std::abs(want[i]))
        << "element " << i;
  }
}

}  // namespace testing_internal
}  // namespace graphgc

#endif  // GRAPHGC_TESTS_TESTING_LAYER_MODELS_H_
