#include "tools/seed_workload.h"

#include "gtest/gtest.h"

namespace graphgc {
namespace {

TEST(SeedData, DrawsTheSeedProgramsShapes) {
  absl::StatusOr<std::pair<Tensor, Tensor>> data = seed::Data(7);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->first.shape(), (TensorShape{7, 10}));
  EXPECT_EQ(data->second.shape(), (TensorShape{7}));
  for (int32_t label : data->second.data<int32_t>()) {
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 10);
  }
}

TEST(SeedData, RefusesANegativeSampleCount) {
  absl::StatusOr<std::pair<Tensor, Tensor>> data = seed::Data(-1);
  EXPECT_EQ(data.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphgc
