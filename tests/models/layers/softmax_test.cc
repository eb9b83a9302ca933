// models/layers/softmax.cc: the Softmax kind through the layer registry:
// values, axis checks, gradient, save/load.
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

Layer Softmax(const std::string& config) { return Make("Softmax", config); }

TEST(Softmax, MatchesKerasDocstringExample) {
  ExpectNear(Predict1(Softmax("{}"), {1, 2, 1}),
             {0.21194157f, 0.5761169f, 0.21194157f});
}

TEST(Softmax, TakesTheLastAxisByIndexAndRefusesOthers) {
  Graph g;
  absl::StatusOr<Sequential> ok = Sequential::Create(
      {layers::Input({2, 3}), Softmax(R"({"axis": 2})")}, {.graph = &g});
  EXPECT_TRUE(ok.ok()) << ok.status();
  Graph g2;
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2, 3}), Softmax(R"({"axis": 1})")}, {.graph = &g2});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("Softmax"));
  EXPECT_THAT(m.status().message(), HasSubstr("axis 1"));
  Graph g3;
  m = Sequential::Create(
      {layers::Input({2, 3}), Softmax(R"({"axis": [1, 2]})")}, {.graph = &g3});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("axis [1, 2]"));
}

TEST(Softmax, AFitStepFollowsTheNumericalGradient) {
  ExpectGradientThrough(Softmax("{}"));
}

TEST(Softmax, SaveWritesTheAxisAndLoadsBack) {
  const Json layer = SaveAndReload(Softmax("{}"), {0.5, -1, 2});
  EXPECT_EQ(layer["class_name"], "Softmax");
  EXPECT_EQ(layer["config"]["axis"], Json(-1));
}

}  // namespace
}  // namespace graphgc
