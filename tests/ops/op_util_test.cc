#include "ops/op_util.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphgc {
namespace {

using ::testing::HasSubstr;

TEST(BroadcastShapes, NumPyRules) {
  using op_util::BroadcastShapes;
  EXPECT_EQ(BroadcastShapes({2, 3}, {3}).value(), (TensorShape{2, 3}));
  EXPECT_EQ(BroadcastShapes({2, 3}, {}).value(), (TensorShape{2, 3}));
  EXPECT_EQ(BroadcastShapes({2, 1}, {1, 4}).value(), (TensorShape{2, 4}));
  EXPECT_EQ(BroadcastShapes({-1, 3}, {3}).value(), (TensorShape{-1, 3}));
  EXPECT_EQ(BroadcastShapes({-1, 1}, {5}).value(), (TensorShape{-1, 5}));
  absl::StatusOr<TensorShape> bad = BroadcastShapes({2, 3}, {4});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("incompatible shapes [2,3] and [4]"));
}

TEST(BroadcastTo, RepeatsAlongBroadcastAxes) {
  Tensor t = Tensor::FromData<float>({2, 1}, std::vector<float>{1, 2}).value();
  Tensor b = op_util::BroadcastTo<float>(t, {3, 2, 2}).value();
  std::vector<float> v(b.data<float>().begin(), b.data<float>().end());
  EXPECT_EQ(v, (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2}));
}

TEST(NormaliseAxis, NegativeAndOutOfRange) {
  EXPECT_EQ(op_util::NormaliseAxis(-1, 3).value(), 2);
  EXPECT_FALSE(op_util::NormaliseAxis(3, 3).ok());
  EXPECT_FALSE(op_util::NormaliseAxis(-4, 3).ok());
}

}  // namespace
}  // namespace graphgc
