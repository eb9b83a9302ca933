#include "ops/state_ops.h"

#include <cmath>

#include "gtest/gtest.h"
#include "ops/ops.h"
#include "ops/resources.h"
#include "runtime/node_view.h"
#include "tests/ops/kernel_test_util.h"

namespace graphgc {
namespace {

using ::testing::ElementsAre;
using testing::F;
using ::testing::HasSubstr;
using testing::KernelRunner;
using testing::Values;

class StateOpsTest : public ::testing::Test {
 protected:
  Output C(Tensor t) { return ops::Const(g_, std::move(t)).value(); }
  Output Var(const std::string& name, TensorShape shape, Tensor init) {
    Output v = ops::VarHandleOp(g_, DT_FLOAT, shape, {.name = name}).value();
    EXPECT_TRUE(
        run_.Run({}, {}, {ops::AssignVariableOp(v, C(init)).value()}).ok());
    return v;
  }
  // v -= 0.5 * [2, -2], for a float [2] variable.
  Output DescentStep(const Output& v) {
    return ops::ResourceApplyGradientDescent(v, C(Tensor::Scalar(0.5f)),
                                             C(F({2}, {2, -2})))
        .value();
  }
  Tensor Read(const Output& v) {
    return run_.Run1(ops::ReadVariableOp(v).value()).value();
  }
  Graph g_;
  KernelRunner run_;
};

TEST_F(StateOpsTest, ReadBeforeAssignIsFailedPreconditionNamingVariable) {
  Output v =
      ops::VarHandleOp(g_, DT_FLOAT, {2}, {.name = "dense/kernel"}).value();
  Output r = ops::ReadVariableOp(v).value();
  EXPECT_EQ(r.dtype(), DT_FLOAT);
  EXPECT_EQ(r.shape(), TensorShape{2});
  absl::StatusOr<Tensor> t = run_.Run1(r);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(t.status().message(), HasSubstr("'dense/kernel'"));
}

TEST_F(StateOpsTest, VariableNameIsTheUniquedNodeName) {
  ops::VarHandleOp(g_, DT_FLOAT, {2}, {.name = "w"}).value();
  Output v2 = ops::VarHandleOp(g_, DT_FLOAT, {2}, {.name = "w"}).value();
  absl::StatusOr<Tensor> t = run_.Run1(ops::ReadVariableOp(v2).value());
  EXPECT_THAT(t.status().message(), HasSubstr("'w_1'"));
}

TEST_F(StateOpsTest, AssignThenRead) {
  Output v = Var("v", {2}, F({2}, {1, 2}));
  EXPECT_THAT(Values(run_.Run1(ops::ReadVariableOp(v).value()).value()),
              ElementsAre(1, 2));
}

TEST_F(StateOpsTest, AssignAddAndSub) {
  Output v = Var("v", {2}, F({2}, {1, 2}));
  ASSERT_TRUE(
      run_.Run({}, {},
               {ops::AssignAddVariableOp(v, C(F({2}, {10, 10}))).value()})
          .ok());
  ASSERT_TRUE(
      run_.Run({}, {}, {ops::AssignSubVariableOp(v, C(F({2}, {1, 0}))).value()})
          .ok());
  EXPECT_THAT(Values(run_.Run1(ops::ReadVariableOp(v).value()).value()),
              ElementsAre(10, 12));
}

TEST_F(StateOpsTest, ReadValueStaysUnchangedAfterLaterAssign) {
  Output v = Var("v", {1}, F({1}, {1}));
  Tensor before = run_.Run1(ops::ReadVariableOp(v).value()).value();
  ASSERT_TRUE(
      run_.Run({}, {}, {ops::AssignAddVariableOp(v, C(F({1}, {5}))).value()})
          .ok());
  EXPECT_THAT(Values(before), ElementsAre(1));
}

TEST_F(StateOpsTest, AssignShapeMismatchIsBuildError) {
  Output v = ops::VarHandleOp(g_, DT_FLOAT, {2}).value();
  Output value = C(F({3}, {1, 2, 3}));
  const int64_t before = g_.num_nodes();
  absl::StatusOr<Output> a = ops::AssignVariableOp(v, value);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(), HasSubstr("shape [3]"));
  EXPECT_EQ(g_.num_nodes(), before);
}

TEST_F(StateOpsTest, AssignDtypeMismatchIsBuildError) {
  Output v = ops::VarHandleOp(g_, DT_FLOAT, {2}).value();
  absl::StatusOr<Output> a =
      ops::AssignVariableOp(v, C(testing::I32({2}, {1, 2})));
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StateOpsTest, ApplyGradientDescent) {
  Output v = Var("v", {2}, F({2}, {1, 2}));
  Output step = DescentStep(v);
  ASSERT_TRUE(run_.Run({}, {}, {step}).ok());
  EXPECT_THAT(Values(run_.Run1(ops::ReadVariableOp(v).value()).value()),
              ElementsAre(0, 3));
}

TEST_F(StateOpsTest, UpdateLeavesAValueReadBeforeItUnchanged) {
  Output v = Var("v", {2}, F({2}, {1, 2}));
  Output step = DescentStep(v);
  ASSERT_TRUE(run_.Run({}, {}, {step}).ok());
  Tensor before = Read(v);
  ASSERT_TRUE(run_.Run({}, {}, {step}).ok());
  Tensor after = Read(v);
  EXPECT_THAT(Values(before), ElementsAre(0, 3));
  EXPECT_THAT(Values(after), ElementsAre(-1, 4));
  EXPECT_FALSE(after.SharesBufferWith(before));
}

TEST_F(StateOpsTest, UpdateWritesInPlaceWhenNoReadIsHeld) {
  Output v = Var("v", {2}, F({2}, {1, 2}));
  Output step = DescentStep(v);
  // The first update copies: the value still shares the assigned constant.
  ASSERT_TRUE(run_.Run({}, {}, {step}).ok());
  const float* buffer = Read(v).data<float>().data();
  ASSERT_TRUE(run_.Run({}, {}, {step}).ok());
  Tensor after = Read(v);
  EXPECT_THAT(Values(after), ElementsAre(-1, 4));
  EXPECT_EQ(after.data<float>().data(), buffer);
}

TEST_F(StateOpsTest, ApplyAdamWritesItsThreeVariablesInPlace) {
  Output var = Var("var", {2}, F({2}, {1, -1}));
  Output m = Var("m", {2}, F({2}, {0, 0}));
  Output v = Var("v", {2}, F({2}, {0, 0}));
  auto s = [&](float x) { return C(Tensor::Scalar(x)); };
  Output step =
      ops::ResourceApplyAdam(var, m, v, s(0.9f), s(0.999f), s(0.1f), s(0.9f),
                             s(0.999f), s(1e-7f), C(F({2}, {0.5f, -2.f})))
          .value();
  ASSERT_TRUE(run_.Run({}, {}, {step}).ok());
  std::vector<const float*> buffers;
  for (const Output& x : {var, m, v}) {
    buffers.push_back(
        run_.Run1(ops::ReadVariableOp(x).value()).value().data<float>().data());
  }
  ASSERT_TRUE(run_.Run({}, {}, {step}).ok());
  int i = 0;
  for (const Output& x : {var, m, v}) {
    EXPECT_EQ(
        run_.Run1(ops::ReadVariableOp(x).value()).value().data<float>().data(),
        buffers[i++]);
  }
}

TEST_F(StateOpsTest, ApplyAdamMatchesFormulaOverTwoSteps) {
  const float lr = 0.1f, b1 = 0.9f, b2 = 0.999f, eps = 1e-7f;
  Output var = Var("var", {2}, F({2}, {1, -1}));
  Output m = Var("m", {2}, F({2}, {0, 0}));
  Output v = Var("v", {2}, F({2}, {0, 0}));
  Output b1p = ops::Placeholder(g_, DT_FLOAT, {}).value();
  Output b2p = ops::Placeholder(g_, DT_FLOAT, {}).value();
  const std::vector<float> grad = {0.5f, -2.f};
  Output step =
      ops::ResourceApplyAdam(var, m, v, b1p, b2p, C(Tensor::Scalar(lr)),
                             C(Tensor::Scalar(b1)), C(Tensor::Scalar(b2)),
                             C(Tensor::Scalar(eps)), C(F({2}, grad)))
          .value();
  double ev[2] = {1, -1}, em[2] = {0, 0}, evv[2] = {0, 0};
  for (int t = 1; t <= 2; ++t) {
    const double p1 = std::pow(b1, t), p2 = std::pow(b2, t);
    ASSERT_TRUE(run_.Run({},
                         {{b1p, Tensor::Scalar(static_cast<float>(p1))},
                          {b2p, Tensor::Scalar(static_cast<float>(p2))}},
                         {step})
                    .ok());
    const double lr_t = lr * std::sqrt(1 - p2) / (1 - p1);
    for (int i = 0; i < 2; ++i) {
      em[i] = em[i] + (grad[i] - em[i]) * (1 - b1);
      evv[i] = evv[i] + (grad[i] * grad[i] - evv[i]) * (1 - b2);
      ev[i] -= lr_t * em[i] / (std::sqrt(evv[i]) + eps);
    }
  }
  std::vector<float> got =
      Values(run_.Run1(ops::ReadVariableOp(var).value()).value());
  std::vector<float> gm =
      Values(run_.Run1(ops::ReadVariableOp(m).value()).value());
  std::vector<float> gv =
      Values(run_.Run1(ops::ReadVariableOp(v).value()).value());
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(got[i], ev[i], 1e-5);
    EXPECT_NEAR(gm[i], em[i], 1e-6);
    EXPECT_NEAR(gv[i], evv[i], 1e-6);
  }
}

TEST_F(StateOpsTest, ApplyAdamOnUninitialisedSlotFails) {
  Output var = Var("var", {1}, F({1}, {1}));
  Output m = ops::VarHandleOp(g_, DT_FLOAT, {1}, {.name = "m"}).value();
  Output v = Var("v", {1}, F({1}, {0}));
  auto s = [&](float x) { return C(Tensor::Scalar(x)); };
  Output step =
      ops::ResourceApplyAdam(var, m, v, s(0.9f), s(0.99f), s(0.1f), s(0.9f),
                             s(0.999f), s(1e-7f), C(F({1}, {1})))
          .value();
  absl::Status st = run_.Run({}, {}, {step}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("'m'"));
}

TEST_F(StateOpsTest, ApplyAdamGradientShapeMismatchIsBuildError) {
  Output var = ops::VarHandleOp(g_, DT_FLOAT, {2}).value();
  Output m = ops::VarHandleOp(g_, DT_FLOAT, {2}).value();
  Output v = ops::VarHandleOp(g_, DT_FLOAT, {2}).value();
  Output s = C(Tensor::Scalar(0.5f));
  Output grad = C(F({3}, {1, 2, 3}));
  const int64_t before = g_.num_nodes();
  absl::StatusOr<Output> step =
      ops::ResourceApplyAdam(var, m, v, s, s, s, s, s, s, grad);
  EXPECT_EQ(step.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g_.num_nodes(), before);
}

TEST_F(StateOpsTest, StatefulOpsAreMarkedStateful) {
  for (const char* op : {"VarHandleOp", "ReadVariableOp", "AssignVariableOp",
                         "AssignAddVariableOp", "AssignSubVariableOp",
                         "ResourceApplyGradientDescent", "ResourceApplyAdam"}) {
    EXPECT_TRUE(GlobalOpRegistry().Lookup(op).value()->def.stateful) << op;
  }
  EXPECT_FALSE(
      GlobalOpRegistry().Lookup("ResourceApplyAdam").value()->def.gradient);
}

TEST_F(StateOpsTest, ReadVariableGradientPassesToHandle) {
  Output v = ops::VarHandleOp(g_, DT_FLOAT, {2}).value();
  Output r = ops::ReadVariableOp(v).value();
  GradContext ctx{g_.Describe(r.handle()).value(), {r}, {C(F({2}, {1, 2}))}};
  auto grads = NodeView(r).op_def()->gradient(ctx).value();
  ASSERT_EQ(grads.size(), 1u);
  ASSERT_TRUE(grads[0].has_value());
  EXPECT_THAT(Values(run_.Run1(*grads[0]).value()), ElementsAre(1, 2));
}

TEST(AsVariable, IsAVariablesOwnResourceAndNullForAnyOther) {
  VariableResource variable(DT_FLOAT, TensorShape{2});
  RandomResource random(1, 2);
  EXPECT_EQ(AsVariable(&variable), &variable);
  EXPECT_EQ(AsVariable(&random), nullptr);
  EXPECT_EQ(AsVariable(nullptr), nullptr);
}

}  // namespace
}  // namespace graphgc
