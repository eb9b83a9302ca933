#include "models/training.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/losses.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {
namespace {

bool Mentions(const absl::Status& s, const std::string& text) {
  return s.message().find(text) != absl::string_view::npos;
}

TEST(CheckFits, RefusesAByteCountThatOverflowsNamingWhat) {
  absl::Status s = CheckFits(DT_FLOAT, TensorShape({1024}),
                             std::numeric_limits<int64_t>::max(), "slots");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "slots: ")) << s;
  EXPECT_TRUE(Mentions(s, "too many bytes to count")) << s;
}

TEST(CheckFits, RefusesMoreThanMaxTensorBytesAsResourceExhausted) {
  SetMaxTensorBytes(1024);
  absl::Status s = CheckFits(DT_FLOAT, TensorShape({256}), 2, "m and v");
  SetMaxTensorBytes(0);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Mentions(s, "m and v: ")) << s;
}

TEST(NewTensor, ZeroedWhenAskedTo) {
  absl::StatusOr<Tensor> t =
      NewTensor(DT_FLOAT, TensorShape({2, 3}), /*zero=*/true, "zeros");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), TensorShape({2, 3}));
  for (float v : t->data<float>()) EXPECT_EQ(v, 0.f);
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
