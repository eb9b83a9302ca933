// models/layers/relu.cc: the ReLU kind through the layer registry, against
// keras.activations.relu's formula (Keras 3), in training and save/load.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

Layer ReLU(const std::string& config) { return Make("ReLU", config); }

const std::vector<float> kX = {-10, -5, 0, 5, 10};

TEST(ReLU, DefaultsAreTheRectifiedLinearUnit) {
  EXPECT_EQ(Predict1(ReLU("{}"), kX), (std::vector<float>{0, 0, 0, 5, 10}));
}

TEST(ReLU, MatchesKerasDocstringExamples) {
  EXPECT_EQ(Predict1(ReLU(R"({"negative_slope": 0.5})"), kX),
            (std::vector<float>{-5, -2.5, 0, 5, 10}));
  EXPECT_EQ(Predict1(ReLU(R"({"max_value": 5})"), kX),
            (std::vector<float>{0, 0, 0, 5, 5}));
  EXPECT_EQ(Predict1(ReLU(R"({"threshold": 5})"), kX),
            (std::vector<float>{0, 0, 0, 0, 10}));
  EXPECT_EQ(Predict1(ReLU(R"({"max_value": 10, "negative_slope": 0.5})"), kX),
            (std::vector<float>{-5, -2.5, 0, 5, 10}));
}

TEST(ReLU, CombinesAllThreeArgumentsAsKeras) {
  // x * (x > 2) clipped to [0, 4], minus 0.5 * relu(2 - x).
  EXPECT_EQ(
      Predict1(
          ReLU(R"({"max_value": 4, "negative_slope": 0.5, "threshold": 2})"),
          {-10, 1, 3, 10}),
      (std::vector<float>{-6, -0.5, 3, 4}));
}

TEST(ReLU, NegativeArgumentsAreRefusedWithKerasWords) {
  for (const char* arg : {"max_value", "negative_slope", "threshold"}) {
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({2}), ReLU(absl::StrCat("{\"", arg, "\": -1}"))},
        {.graph = &g});
    ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << arg;
    EXPECT_THAT(m.status().message(),
                HasSubstr(absl::StrCat(arg, " of a ReLU layer cannot be")));
  }
  EXPECT_FALSE(layers::FromConfig("ReLU", R"({"threshold": null})").ok());
}

TEST(ReLU, AFitStepFollowsTheNumericalGradient) {
  ExpectGradientThrough(ReLU(R"({"max_value": 1.5, "negative_slope": 0.1})"));
}

TEST(ReLU, SaveWritesKerasConfigAndLoadsBack) {
  const Json layer = SaveAndReload(
      ReLU(R"({"max_value": 6, "negative_slope": 0.25, "name": "r"})"), kX);
  EXPECT_EQ(layer["class_name"], "ReLU");
  EXPECT_EQ(layer["config"]["name"], "r");
  EXPECT_EQ(layer["config"]["max_value"], Json(6.0));
  EXPECT_EQ(layer["config"]["negative_slope"], Json(0.25));
  EXPECT_EQ(layer["config"]["threshold"], Json(0.0));
  EXPECT_TRUE(SaveAndReload(ReLU("{}"), kX)["config"]["max_value"].is_null());
}

TEST(ReLU, SummaryHasItsRow) {
  Graph g;
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({3}), ReLU("{}")}, {.graph = &g});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(m->Summary(), HasSubstr("re_lu (ReLU)"));
  EXPECT_THAT(m->Summary(), HasSubstr("(None, 3)"));
}

}  // namespace
}  // namespace graphgc
