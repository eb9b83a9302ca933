#include "models/optimizer_registry.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/keras_json.h"
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

TEST(OptimizerKinds, FindsEachByKerasClassNameAndStringName) {
  for (const char* name :
       {"Adam", "adam", "SGD", "sgd", "RMSprop", "rmsprop", "AdamW", "adamw",
        "Adagrad", "adagrad", "Adamax", "adamax", "Nadam", "nadam", "Adadelta",
        "adadelta", "Lion", "lion"}) {
    EXPECT_NE(FindOptimizerKindByName(name), nullptr) << name;
  }
  EXPECT_EQ(FindOptimizerKindByName("Ftrl"), nullptr);
}

TEST(OptimizerKinds, NameIsTheKerasClassName) {
  EXPECT_EQ(optimizers::Adam().name(), "Adam");
  EXPECT_EQ(optimizers::SGD().name(), "SGD");
  EXPECT_EQ(optimizers::RMSprop().name(), "RMSprop");
  EXPECT_EQ(Optimizer{}.name(), "none");
}

TEST(OptimizerKinds, ConfigReadsBackTheSameOptions) {
  const Optimizer rms = optimizers::RMSprop({.learning_rate = 0.01f,
                                             .rho = 0.8f,
                                             .momentum = 0.5f,
                                             .epsilon = 1e-6f,
                                             .centered = true});
  const OptimizerKind* kind = FindOptimizerKind(rms);
  ASSERT_NE(kind, nullptr);
  const Json json = kind->write_config(rms);
  EXPECT_EQ(json["class_name"], "RMSprop");
  absl::StatusOr<Optimizer> back =
      kind->read_config(ConfigObject(json["config"], "config"));
  ASSERT_TRUE(back.ok()) << back.status();
  const auto& o = std::get<RMSpropOptions>(back->options);
  EXPECT_EQ(o.learning_rate, 0.01f);
  EXPECT_EQ(o.rho, 0.8f);
  EXPECT_EQ(o.momentum, 0.5f);
  EXPECT_EQ(o.epsilon, 1e-6f);
  EXPECT_TRUE(o.centered);
}

TEST(OptimizerKinds, SlotsPerWeightCountRMSpropsOptionalSlots) {
  const OptimizerKind* kind = FindOptimizerKindByName("RMSprop");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->slots_per_weight(optimizers::RMSprop()), 1);
  EXPECT_EQ(kind->slots_per_weight(
                optimizers::RMSprop({.momentum = 0.9f, .centered = true})),
            3);
}

TEST(CheckOptimizer, AcceptsKerasDefaults) {
  EXPECT_TRUE(CheckOptimizer(optimizers::Adam()).ok());
  EXPECT_TRUE(CheckOptimizer(optimizers::SGD()).ok());
  EXPECT_TRUE(CheckOptimizer(optimizers::RMSprop()).ok());
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

TEST(CheckOptimizer, RefusesRMSpropRhoAboveOneNamingTheOptionAndValue) {
  absl::Status s = CheckOptimizer(optimizers::RMSprop({.rho = 2.f}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "RMSprop rho must be in [0, 1], got 2")) << s;
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
