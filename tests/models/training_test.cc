#include "models/training.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/losses.h"
#include "models/optimizers.h"
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

TEST(CheckOptimizer, AcceptsKerasDefaults) {
  EXPECT_TRUE(CheckOptimizer(optimizers::Adam()).ok());
  EXPECT_TRUE(CheckOptimizer(optimizers::SGD()).ok());
}

TEST(CheckOptimizer, RefusesNoOptimizer) {
  EXPECT_EQ(CheckOptimizer(Optimizer{}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CheckOptimizer, RefusesAdamBeta1OfOneNamingTheOptionAndValue) {
  absl::Status s = CheckOptimizer(optimizers::Adam({.beta_1 = 1.f}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "Adam beta_1 must be in [0, 1), got 1")) << s;
}

TEST(CheckOptimizer, RefusesSGDMomentumAboveOneNamingTheOptionAndValue) {
  absl::Status s = CheckOptimizer(optimizers::SGD({.momentum = 1.5f}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "SGD momentum must be in [0, 1], got 1.5")) << s;
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

// One float variable `w` of value 1 and the gradient 0.5 for it.
struct OneWeight {
  Graph g;
  Session session{g};
  Output w;
  Output grad;
  OneWeight() {
    w = *ops::VarHandleOp(g, DT_FLOAT, TensorShape(), {.name = "w"});
    Output one = *ops::Const(g, 1.f);
    Output init = *ops::AssignVariableOp(w, one);
    EXPECT_TRUE(session.Run({}, {}, {init}).ok());
    grad = *ops::Const(g, 0.5f, {.name = "grad"});
  }
  float Value() {
    Output read = *ops::ReadVariableOp(w);
    return (*session.Run({}, {read}))[0].data<float>()[0];
  }
};

TEST(BuildUpdates, RefusesAModelWithoutWeights) {
  Graph g;
  Session session(g);
  absl::StatusOr<UpdateNodes> nodes =
      BuildUpdates(optimizers::SGD(), {}, {}, {}, {}, "m", session);
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BuildUpdates, RefusesNoOptimizer) {
  OneWeight m;
  absl::StatusOr<UpdateNodes> nodes = BuildUpdates(
      Optimizer{}, {m.w}, {TensorShape()}, {m.grad}, {}, "m", m.session);
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BuildUpdates, PlainSGDStepSubtractsLearningRateTimesGradient) {
  OneWeight m;
  absl::StatusOr<UpdateNodes> nodes =
      BuildUpdates(optimizers::SGD({.learning_rate = 0.1f}), {m.w},
                   {TensorShape()}, {m.grad}, {}, "m", m.session);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_TRUE(m.g.FindNode("m/SGD/w/ResourceApplyGradientDescent").has_value());
  ASSERT_TRUE(m.session.Run({}, {}, {nodes->train_op}).ok());
  EXPECT_FLOAT_EQ(m.Value(), 1.f - 0.1f * 0.5f);
}

TEST(BuildUpdates, SGDWithMomentumKeepsAVelocityPerVariable) {
  OneWeight m;
  absl::StatusOr<UpdateNodes> nodes =
      BuildUpdates(optimizers::SGD({.learning_rate = 0.1f, .momentum = 0.9f}),
                   {m.w}, {TensorShape()}, {m.grad}, {}, "m", m.session);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_TRUE(m.g.FindNode("m/SGD/w/momentum").has_value());
  ASSERT_TRUE(m.session.Run({}, {}, {nodes->train_op}).ok());
  ASSERT_TRUE(m.session.Run({}, {}, {nodes->train_op}).ok());
  // v1 = -0.05, v2 = 0.9 * v1 - 0.05 = -0.095.
  EXPECT_FLOAT_EQ(m.Value(), 1.f - 0.05f - 0.095f);
}

TEST(BuildUpdates, AdamFirstStepMovesEachWeightByAboutTheLearningRate) {
  OneWeight m;
  absl::StatusOr<UpdateNodes> nodes =
      BuildUpdates(optimizers::Adam({.learning_rate = 0.01f}), {m.w},
                   {TensorShape()}, {m.grad}, {}, "m", m.session);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_TRUE(m.g.FindNode("m/Adam/w/ResourceApplyAdam").has_value());
  ASSERT_TRUE(m.session.Run({}, {}, {nodes->train_op}).ok());
  // Bias-corrected: m_hat = g, v_hat = g^2, so the step is lr * g / |g|.
  EXPECT_NEAR(m.Value(), 1.f - 0.01f, 1e-5f);
}

TEST(BuildUpdates, TheLearningRateIsAVariableSetToTheOptimizersRate) {
  OneWeight m;
  absl::StatusOr<UpdateNodes> nodes =
      BuildUpdates(optimizers::Adam({.learning_rate = 0.25f}), {m.w},
                   {TensorShape()}, {m.grad}, {}, "m", m.session);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->learning_rate.variable.node_name(), "m/Adam/learning_rate");
  absl::StatusOr<std::vector<Tensor>> lr =
      m.session.Run({}, {nodes->learning_rate.read});
  ASSERT_TRUE(lr.ok()) << lr.status();
  EXPECT_EQ((*lr)[0].data<float>()[0], 0.25f);
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
