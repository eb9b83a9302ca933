// models/layers/elu.cc: the ELU kind through the layer registry, against
// keras.activations.elu's formula (Keras 3), in training and save/load.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/layers.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "tests/testing/layer_models.h"

namespace graphgc {
namespace {

using ::testing::HasSubstr;
using testing_internal::ExpectGradientThrough;
using testing_internal::ExpectNear;
using testing_internal::Json;
using testing_internal::Make;
using testing_internal::Predict1;
using testing_internal::SaveAndReload;

Layer ELU(const std::string& config) { return Make("ELU", config); }

TEST(ELU, IsXAbove0AndAlphaTimesExpMinus1Below) {
  const std::vector<float> x = {-3, -0.5, 0, 0.5, 3};
  std::vector<float> want;
  for (float v : x) want.push_back(v > 0 ? v : 2.f * std::expm1(v));
  ExpectNear(Predict1(ELU(R"({"alpha": 2})"), x), want);
  EXPECT_NEAR(Predict1(ELU("{}"), {-1})[0], std::expm1(-1.f), 1e-6);  // alpha 1
}

TEST(ELU, AFitStepFollowsTheNumericalGradient) {
  ExpectGradientThrough(ELU(R"({"alpha": 0.7})"));
}

TEST(ELU, SaveKeepsAlphaAndLoadsBack) {
  const Json layer = SaveAndReload(ELU(R"({"alpha": 0.5})"), {-2, 1});
  EXPECT_EQ(layer["class_name"], "ELU");
  EXPECT_EQ(layer["config"]["alpha"], Json(0.5));
  EXPECT_EQ(layer["config"]["name"], "elu");
}

TEST(ELU, SummaryHasItsRowAndANonNumericAlphaIsRefused) {
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({3}), ELU("{}")}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(m->Summary(), HasSubstr("elu (ELU)"));
  absl::StatusOr<Layer> bad = layers::FromConfig("ELU", R"({"alpha": "x"})");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("alpha"));
}

}  // namespace
}  // namespace graphgc
