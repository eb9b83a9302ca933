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

TEST(BuildLoss, RefusesNoLoss) {
  Graph g;
  Output y = *ops::Placeholder(g, DT_FLOAT, {-1, 2});
  absl::StatusOr<LossNodes> nodes =
      BuildLoss(Loss{}, {.output = y, .units = 2}, "m", false);
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BuildLoss, SparseCrossentropyTakesInt32ClassIdsPerExample) {
  Graph g;
  Output y = *ops::Placeholder(g, DT_FLOAT, {-1, 3});
  absl::StatusOr<LossNodes> nodes =
      BuildLoss(losses::SparseCategoricalCrossentropy(),
                {.output = y, .units = 3}, "m", false);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->labels.node_name(), "m/labels");
  EXPECT_EQ(nodes->labels.dtype(), DT_INT32);
}

TEST(BuildLoss, MeanSquaredErrorIsTheMeanOfSquaredDifferences) {
  Graph g;
  Output y = *ops::Placeholder(g, DT_FLOAT, {-1, 1});
  absl::StatusOr<LossNodes> nodes = BuildLoss(
      losses::MeanSquaredError(), {.output = y, .units = 1}, "m", false);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  Session session(g);
  absl::StatusOr<std::vector<Tensor>> out = session.Run(
      {{y, *Tensor::FromData<float>({2, 1}, std::vector<float>{1, 2})},
       {nodes->labels,
        *Tensor::FromData<float>({2, 1}, std::vector<float>{0, 0})}},
      {nodes->loss});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], 2.5f);  // (1 + 4) / 2
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
