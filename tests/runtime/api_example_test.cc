// The low-level graph API example of /work/shared/API.md, unchanged but for
// the checks of its closing comment.
#include "gtest/gtest.h"
#include "ops/gradients.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"

namespace gg = graphgc;

namespace {

std::vector<float> Values(const gg::Tensor& t) {
  auto d = t.data<float>();
  return std::vector<float>(d.begin(), d.end());
}

TEST(ApiExample, LowLevelGraphApiRunsAsDocumented) {
  gg::Graph g;
  gg::Output x = gg::ops::Placeholder(g, gg::DT_FLOAT, {-1, 3}).value();
  gg::Output w = gg::ops::Const(g, gg::Tensor::FromData<float>(
                                       {3, 1}, std::vector<float>{1, 2, 3})
                                       .value())
                     .value();
  gg::Output y = gg::ops::MatMul(x, w).value();  // graph taken from inputs
  gg::Output loss = gg::ops::Mean(gg::ops::Square(y).value()).value();
  std::vector<gg::Output> grads = gg::AddGradients(loss, {w}).value();
  gg::Session session(g);
  gg::Tensor xt =
      gg::Tensor::FromData<float>({2, 3}, std::vector<float>{1, 0, 0, 0, 1, 0})
          .value();
  std::vector<gg::Tensor> out = session.Run({{x, xt}}, {y, grads[0]}).value();
  // out[0] = [[1], [2]], out[1] = [[1], [2], [0]]
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (gg::TensorShape{2, 1}));
  EXPECT_EQ(Values(out[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(out[1].shape(), (gg::TensorShape{3, 1}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{1, 2, 0}));
}

}  // namespace
