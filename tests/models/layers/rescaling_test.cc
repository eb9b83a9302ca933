// models/layers/rescaling.cc: the Rescaling kind through the layer
// registry: x * scale + offset, gradient, save/load.
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

Layer Rescaling(const std::string& config) { return Make("Rescaling", config); }

TEST(Rescaling, ScalesThenOffsets) {
  ExpectNear(Predict1(Rescaling(R"({"scale": 0.00784313725, "offset": -1})"),
                      {0, 127.5, 255}),
             {-1, 0, 1});
  ExpectNear(Predict1(Rescaling(R"({"scale": 2})"), {-1, 3}), {-2, 6});
}

TEST(Rescaling, ScaleIsRequiredAndMustBeANumber) {
  absl::StatusOr<Layer> missing = layers::FromConfig("Rescaling", "{}");
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("scale"));
  absl::StatusOr<Layer> array =
      layers::FromConfig("Rescaling", R"({"scale": [1, 2]})");
  ASSERT_EQ(array.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(array.status().message(), HasSubstr("scale"));
}

TEST(Rescaling, AFitStepFollowsTheNumericalGradient) {
  ExpectGradientThrough(Rescaling(R"({"scale": -1.5, "offset": 0.25})"));
}

TEST(Rescaling, SaveWritesScaleAndOffsetAndLoadsBack) {
  const Json layer =
      SaveAndReload(Rescaling(R"({"scale": 0.5, "offset": 2})"), {1, 2});
  EXPECT_EQ(layer["class_name"], "Rescaling");
  EXPECT_EQ(layer["config"]["scale"], Json(0.5));
  EXPECT_EQ(layer["config"]["offset"], Json(2.0));
}

}  // namespace
}  // namespace graphgc
