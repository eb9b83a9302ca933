// models/sample_weights.h: Keras's sample_weight checks, class_weight's
// per-sample weights and a batch's weights.
#include "models/sample_weights.h"

#include <cstdint>
#include <map>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace {

using models_internal::CheckSampleWeight;
using models_internal::ClassWeightsToSampleWeights;
using models_internal::GatherWeights;

std::vector<float> Values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

TEST(ClassWeightsToSampleWeights, WeighsClassIdsAndLeavesUnlistedClassesAtOne) {
  Tensor y =
      Tensor::FromData<int32_t>({4}, std::vector<int32_t>{0, 2, 1, 2}).value();
  Tensor w =
      ClassWeightsToSampleWeights(y, {{0, 0.5f}, {2, 3.f}}, "fit").value();
  EXPECT_EQ(Values(w), (std::vector<float>{0.5f, 3.f, 1.f, 3.f}));
}

TEST(ClassWeightsToSampleWeights, TakesTheArgmaxOfOneHotRows) {
  Tensor y = Tensor::FromData<float>(
                 {2, 3}, std::vector<float>{0, 1, 0, 0.2f, 0.1f, 0.7f})
                 .value();
  Tensor w =
      ClassWeightsToSampleWeights(y, {{1, 4.f}, {2, 2.f}}, "fit").value();
  EXPECT_EQ(Values(w), (std::vector<float>{4.f, 2.f}));
}

TEST(ClassWeightsToSampleWeights, RoundsFloatLabelsHalfToEvenAsNumpy) {
  Tensor y =
      Tensor::FromData<float>({3, 1}, std::vector<float>{0.5f, 1.5f, 0.9f})
          .value();
  Tensor w =
      ClassWeightsToSampleWeights(y, {{0, 10.f}, {1, 20.f}, {2, 30.f}}, "fit")
          .value();
  EXPECT_EQ(Values(w), (std::vector<float>{10.f, 30.f, 20.f}));
}

TEST(CheckSampleWeight, RefusesAWrongLengthNamingTheCall) {
  Tensor w = Tensor::FromData<float>({3}, std::vector<float>{1, 1, 1}).value();
  absl::Status s = CheckSampleWeight(w, 4, "Fit of 'm'");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Fit of 'm': sample_weight must be float of "
                             "shape [4]"),
            absl::string_view::npos)
      << s;
  EXPECT_TRUE(CheckSampleWeight(w, 3, "fit").ok());
}

TEST(GatherWeights, GathersRowsOrOnesWithoutWeights) {
  Tensor w = Tensor::FromData<float>({3}, std::vector<float>{1, 2, 3}).value();
  std::vector<int64_t> rows = {2, 0};
  EXPECT_EQ(Values(GatherWeights(&w, rows).value()),
            (std::vector<float>{3, 1}));
  EXPECT_EQ(Values(GatherWeights(nullptr, rows).value()),
            (std::vector<float>{1, 1}));
}

}  // namespace
}  // namespace graphgc
