#include "ops/ops.h"

#include "gtest/gtest.h"
#include "tests/ops/kernel_test_util.h"

namespace graphgc {
namespace {

namespace gg = graphgc;
using ::testing::ElementsAre;
using testing::F;
using ::testing::HasSubstr;
using testing::KernelRunner;
using testing::Values;

TEST(OpsTest, ApiExampleBuildsAndRuns) {
  gg::Graph g;
  gg::Output x = gg::ops::Placeholder(g, gg::DT_FLOAT, {-1, 3}).value();
  gg::Output w = gg::ops::Const(g, gg::Tensor::FromData<float>(
                                       {3, 1}, std::vector<float>{1, 2, 3})
                                       .value())
                     .value();
  gg::Output y = gg::ops::MatMul(x, w).value();
  gg::Output loss = gg::ops::Mean(gg::ops::Square(y).value()).value();
  EXPECT_EQ(y.shape(), (TensorShape{-1, 1}));
  EXPECT_EQ(loss.shape(), TensorShape{});
  KernelRunner run;
  gg::Tensor xt = F({2, 3}, {1, 0, 0, 0, 1, 0});
  std::vector<Tensor> out = run.Run({y, loss}, {{x, xt}}).value();
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 2));
  EXPECT_THAT(Values(out[1]), ElementsAre(2.5));
}

TEST(OpsTest, NamesAndControlInputs) {
  Graph g;
  Output a = ops::Const(g, 1.f, {.name = "a"}).value();
  Output b =
      ops::Identity(a, {.name = "scope/b", .control_inputs = {a.handle()}})
          .value();
  EXPECT_EQ(b.node_name(), "scope/b");
  EXPECT_EQ(g.Describe(b.handle()).value().control_inputs.size(), 1u);
  Output c = ops::Identity(a, {.name = "scope/b"}).value();
  EXPECT_EQ(c.node_name(), "scope/b_1");
  EXPECT_EQ(b.name(), "scope/b:0");
  Output d = ops::Identity(a).value();
  EXPECT_EQ(d.node_name(), "Identity");
}

TEST(OpsTest, MatMulInnerMismatchIsClearBuildErrorAndGraphUnchanged) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {-1, 3}).value();
  Output w = ops::Placeholder(g, DT_FLOAT, {4, 2}).value();
  const int64_t before = g.num_nodes();
  absl::StatusOr<Output> y = ops::MatMul(x, w, {.name = "dense_1/MatMul"});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(),
              HasSubstr("MatMul 'dense_1/MatMul': inner dimensions 3 vs 4"));
  EXPECT_EQ(g.num_nodes(), before);
}

TEST(OpsTest, DtypeMismatchIsBuildErrorAndGraphUnchanged) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {2}).value();
  Output i = ops::Placeholder(g, DT_INT32, {2}).value();
  const int64_t before = g.num_nodes();
  absl::StatusOr<Output> y = ops::AddV2(x, i);
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(), HasSubstr("input 1 is int32"));
  EXPECT_EQ(g.num_nodes(), before);
}

TEST(OpsTest, ShapeMismatchIsBuildErrorAndGraphUnchanged) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {2, 3}).value();
  Output y = ops::Placeholder(g, DT_FLOAT, {4}).value();
  const int64_t before = g.num_nodes();
  absl::StatusOr<Output> z = ops::Mul(x, y, {.name = "m"});
  EXPECT_EQ(z.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(z.status().message(), HasSubstr("Mul 'm': incompatible shapes"));
  EXPECT_EQ(g.num_nodes(), before);
}

TEST(OpsTest, InputsOfTwoGraphsAreRejected) {
  Graph g1, g2;
  Output a = ops::Placeholder(g1, DT_FLOAT, {2}).value();
  Output b = ops::Placeholder(g2, DT_FLOAT, {2}).value();
  const int64_t n1 = g1.num_nodes(), n2 = g2.num_nodes();
  absl::StatusOr<Output> c = ops::AddV2(a, b);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("another graph"));
  EXPECT_EQ(g1.num_nodes(), n1);
  EXPECT_EQ(g2.num_nodes(), n2);
}

TEST(OpsTest, EmptyOutputIsRejected) {
  Graph g;
  Output a = ops::Placeholder(g, DT_FLOAT, {2}).value();
  const int64_t before = g.num_nodes();
  EXPECT_THAT(ops::AddV2(a, Output()).status().message(),
              HasSubstr("empty Output"));
  EXPECT_THAT(ops::Relu(Output()).status().message(),
              HasSubstr("empty Output"));
  EXPECT_EQ(g.num_nodes(), before);
}

TEST(OpsTest, FailedReductionLeavesNoAxesConstant) {
  Graph g;
  Output x = ops::Placeholder(g, DT_INT32, {2}).value();
  const int64_t before = g.num_nodes();
  EXPECT_FALSE(ops::Mean(x, {.axes = {1}}).ok());
  EXPECT_EQ(g.num_nodes(), before);
}

TEST(OpsTest, AddBuildsAddV2) {
  Graph g;
  Output a = ops::Const(g, 1.f).value();
  EXPECT_EQ(ops::Add(a, a).value().op(), "AddV2");
  EXPECT_EQ(ops::AddV2(a, a).value().op(), "AddV2");
}

TEST(OpsTest, SumWithoutAxesReducesAll) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {-1, 3, 2}).value();
  EXPECT_EQ(ops::Sum(x).value().shape(), TensorShape{});
  EXPECT_EQ(ops::Sum(x, {.axes = {1}, .keep_dims = true}).value().shape(),
            (TensorShape{-1, 1, 2}));
}

TEST(OpsTest, NoOutputOpsReturnANamedTarget) {
  Graph g;
  Output v = ops::VarHandleOp(g, DT_FLOAT, {1}, {.name = "v"}).value();
  Output a =
      ops::AssignVariableOp(
          v,
          ops::Const(
              g, Tensor::FromData<float>({1}, std::vector<float>{1}).value())
              .value(),
          {.name = "init"})
          .value();
  EXPECT_EQ(a.node_name(), "init");
  EXPECT_EQ(a.dtype(), DT_INVALID);  // no data output
  Output n =
      ops::NoOp(g, {.name = "all", .control_inputs = {a.handle()}}).value();
  EXPECT_EQ(n.op(), "NoOp");
}

}  // namespace
}  // namespace graphgc
