#include "util/status_macros.h"

#include <string>

#include "gtest/gtest.h"

namespace graphgc {
namespace {

absl::StatusOr<int> Half(int v) {
  if (v % 2 != 0) return absl::InvalidArgumentError("odd");
  return v / 2;
}

absl::StatusOr<int> Quarter(int v) {
  GG_ASSIGN_OR_RETURN(int h, Half(v));
  GG_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

absl::Status CheckEven(int v) {
  GG_RETURN_IF_ERROR(Half(v).status());
  return absl::OkStatus();
}

TEST(StatusMacros, AssignOrReturnPassesValuesThrough) {
  EXPECT_EQ(Quarter(8).value(), 2);
}

TEST(StatusMacros, AssignOrReturnReturnsTheFirstError) {
  EXPECT_EQ(Quarter(6).status().message(), "odd");
}

TEST(StatusMacros, ReturnIfErrorReturnsTheError) {
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(3).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphgc
