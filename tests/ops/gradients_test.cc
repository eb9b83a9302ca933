#include "ops/gradients.h"

#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace {

std::vector<float> Values(const Tensor& t) {
  auto d = t.data<float>();
  return std::vector<float>(d.begin(), d.end());
}

Tensor Floats(const TensorShape& shape, std::vector<float> v) {
  return Tensor::FromData<float>(shape, std::move(v)).value();
}

TEST(AddGradients, MatMulGradientIsTheInputTransposedTimesTheSeed) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {2, 3}).value();
  Output w = ops::Const(g, Floats({3, 1}, {1, 2, 3})).value();
  Output y = ops::MatMul(x, w).value();
  std::vector<Output> grads = AddGradients(y, {w, x}).value();
  ASSERT_EQ(grads.size(), 2u);
  Session session(g);
  std::vector<Tensor> out =
      session.Run({{x, Floats({2, 3}, {1, 2, 3, 4, 5, 6})}}, grads).value();
  // d(sum y)/dw = x^T * ones: the column sums of x.
  EXPECT_EQ(out[0].shape(), (TensorShape{3, 1}));
  EXPECT_EQ(Values(out[0]), (std::vector<float>{5, 7, 9}));
  // d(sum y)/dx = ones * w^T: each row is w.
  EXPECT_EQ(Values(out[1]), (std::vector<float>{1, 2, 3, 1, 2, 3}));
}

TEST(AddGradients, FanOutGradientsAreSummed) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {2}).value();
  Output y = ops::Add(ops::Square(x).value(), x).value();  // x^2 + x
  std::vector<Output> grads = AddGradients(y, {x}).value();
  Session session(g);
  std::vector<Tensor> out =
      session.Run({{x, Floats({2}, {1, -3})}}, grads).value();
  EXPECT_EQ(Values(out[0]), (std::vector<float>{3, -5}));  // 2x + 1
}

TEST(AddGradients, AnXThatYDoesNotReadGetsZeros) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {2}).value();
  Output unused = ops::Const(g, Floats({3}, {1, 2, 3})).value();
  Output y = ops::Square(x).value();
  std::vector<Output> grads = AddGradients(y, {unused}).value();
  Session session(g);
  std::vector<Tensor> out =
      session.Run({{x, Floats({2}, {1, 2})}}, grads).value();
  EXPECT_EQ(Values(out[0]), (std::vector<float>{0, 0, 0}));
}

TEST(AddGradients, GradientNodesGoUnderTheGivenScope) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {2}).value();
  Output y = ops::Square(x).value();
  std::vector<Output> grads =
      AddGradients(y, {x}, std::nullopt, "model/gradients").value();
  EXPECT_TRUE(absl::StartsWith(grads[0].node_name(), "model/gradients/"))
      << grads[0].node_name();
}

TEST(AddGradients, AnEmptyXIsRefusedBeforeAnyNodeIsBuilt) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {2}).value();
  Output y = ops::Square(x, {.name = "y"}).value();
  g.Collect();
  const int64_t before = g.num_nodes();
  ASSERT_EQ(g.gc_stats().peak_nodes, before);
  absl::StatusOr<std::vector<Output>> grads = AddGradients(y, {x, Output()});
  EXPECT_EQ(grads.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(grads.status().message(), "empty Output"))
      << grads.status();
  // Refused before building: not one node was added, even for a moment.
  EXPECT_EQ(g.gc_stats().peak_nodes, before);
  EXPECT_EQ(g.num_nodes(), before);
}

}  // namespace
}  // namespace graphgc
