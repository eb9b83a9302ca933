// models/layers/activations.cc: the activations layers take by name (the
// Activation layer, Dense's activation=), each against Keras 3's formula
// (keras/src/activations/activations.py), its gradient against central
// differences, and its name through save and load.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
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
#include "tests/testing/numeric_gradient.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using testing_internal::FloatValues;

Tensor T(TensorShape shape, std::vector<float> values) {
  absl::StatusOr<Tensor> t = Tensor::FromData<float>(shape, values);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

double Relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }
double Elu(double x, double a) { return x > 0 ? x : a * (std::exp(x) - 1); }

struct Case {
  std::string name;
  std::function<double(double)> keras;  // Keras 3's formula
};

std::vector<Case> Cases() {
  return {
      {"elu", [](double x) { return Elu(x, 1); }},
      {"selu",
       [](double x) {
         return 1.0507009873554804934193349852946 *
                Elu(x, 1.6732632423543772848170429916717);
       }},
      {"leaky_relu", [](double x) { return x > 0 ? x : 0.2 * x; }},
      {"gelu",
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"swish", [](double x) { return x / (1 + std::exp(-x)); }},
      {"silu", [](double x) { return x / (1 + std::exp(-x)); }},
      {"softplus", [](double x) { return std::log1p(std::exp(x)); }},
      {"softsign", [](double x) { return x / (std::abs(x) + 1); }},
      {"relu6", Relu6},
      {"hard_sigmoid", [](double x) { return Relu6(x + 3) / 6; }},
      {"exponential", [](double x) { return std::exp(x); }},
  };
}

class ActivationTest : public ::testing::TestWithParam<Case> {};

TEST_P(ActivationTest, MatchesKeras3sFormula) {
  const std::vector<float> x = {-30,  -7,  -3, -2.5, -1, -0.3, 0,
                                1e-3, 0.4, 1,  2.9,  3,  6.5,  20};
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({static_cast<int64_t>(x.size())}),
                          layers::Activation(GetParam().name)},
                         {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Tensor> y =
      m->Predict(T({1, static_cast<int64_t>(x.size())}, x));
  ASSERT_TRUE(y.ok()) << y.status();
  const std::vector<float> got = FloatValues(*y);
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = GetParam().keras(x[i]);
    EXPECT_NEAR(got[i], want, 2e-6 + 2e-6 * std::abs(want)) << "x=" << x[i];
  }
}

TEST_P(ActivationTest, AFitStepFollowsTheNumericalGradient) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2}),
       layers::Dense(3, {.activation = GetParam().name, .seed = 5}),
       layers::Dense(1, {.seed = 6})},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, T({3, 2}, {1, -2, 0.5, 1.5, -1, -0.5}), T({3, 1}, {1, -1, 0.5}), lr);
}

INSTANTIATE_TEST_SUITE_P(Keras3, ActivationTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(Activations, NamesRoundTripThroughSaveWithSwishSavedAsSilu) {
  const std::string dir = TestTempPath();
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2}), layers::Dense(3, {.activation = "gelu", .seed = 1}),
       layers::Activation("swish")},
      {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->Save(dir).ok());
  std::ifstream in(dir + "/config.json", std::ios::binary);
  const Json config = Json::parse(std::string(
      (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  EXPECT_EQ(config["config"]["layers"][1]["config"]["activation"], "gelu");
  EXPECT_EQ(config["config"]["layers"][2]["config"]["activation"], "silu");

  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Tensor x = T({1, 2}, {0.5, -2});
  absl::StatusOr<Tensor> a = m->Predict(x);
  absl::StatusOr<Tensor> b = loaded->Predict(x);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(FloatValues(*a), FloatValues(*b));
}

TEST(Activations, AnUnknownNameIsRefusedListingTheKnownOnes) {
  Graph g;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2}), layers::Activation("mish")}, {.graph = &g});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("unknown activation 'mish'"));
  EXPECT_THAT(m.status().message(), HasSubstr("gelu"));
  EXPECT_THAT(m.status().message(), HasSubstr("hard_sigmoid"));
}

}  // namespace
}  // namespace graphgc
