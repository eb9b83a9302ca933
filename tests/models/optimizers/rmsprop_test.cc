// RMSprop (models/optimizers/rmsprop.cc) step by step against Keras 3's
// update (keras/src/optimizers/rmsprop.py), computed here.
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/optimizer_registry.h"
#include "models/optimizers.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {
namespace {

// Weights w of shape [2] minimising sum(w^2) / 2, so the gradient is w.
struct Quadratic {
  Graph g;
  Session session{g};
  Output w;
  Output grad;
  explicit Quadratic(std::vector<float> init) {
    w = *ops::VarHandleOp(g, DT_FLOAT, TensorShape({2}), {.name = "w"});
    Output value = *ops::Const(g, *Tensor::FromData<float>({2}, init));
    EXPECT_TRUE(session.Run({}, {}, {*ops::AssignVariableOp(w, value)}).ok());
    grad = *ops::ReadVariableOp(w, {.name = "grad"});
  }
  std::vector<float> Value() {
    Output read = *ops::ReadVariableOp(w);
    const Tensor t = (*session.Run({}, {read}))[0];
    return {t.data<float>()[0], t.data<float>()[1]};
  }
};

// Keras 3's RMSprop.update_step for one weight, in float as Keras runs it.
struct KerasRMSprop {
  RMSpropOptions o;
  float velocity = 0, momentum = 0, average_grad = 0;
  void Step(float& w) {
    const float g = w;
    velocity = o.rho * velocity + (1 - o.rho) * (g * g);
    float denominator;
    if (o.centered) {
      average_grad = o.rho * average_grad + (1 - o.rho) * g;
      denominator = velocity - average_grad * average_grad + o.epsilon;
    } else {
      denominator = velocity + o.epsilon;
    }
    const float increment = o.learning_rate * g / std::sqrt(denominator);
    if (o.momentum > 0) {
      momentum = o.momentum * momentum + increment;
      w -= momentum;
    } else {
      w -= increment;
    }
  }
};

void ExpectMatchesKeras(const RMSpropOptions& options) {
  Quadratic m({10.f, -0.5f});
  absl::StatusOr<UpdateNodes> nodes =
      BuildUpdates(optimizers::RMSprop(options), {m.w}, {TensorShape({2})},
                   {m.grad}, {}, "m", m.session);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  std::vector<KerasRMSprop> keras(2, KerasRMSprop{.o = options});
  std::vector<float> want = {10.f, -0.5f};
  for (int step = 1; step <= 5; ++step) {
    ASSERT_TRUE(m.session.Run({}, {}, {nodes->train_op}).ok());
    for (int i = 0; i < 2; ++i) keras[i].Step(want[i]);
    const std::vector<float> got = m.Value();
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-5f * std::max(1.f, std::fabs(want[i])))
          << "step " << step << " weight " << i;
    }
  }
}

TEST(RMSprop, KerasDocExampleFirstStep) {
  // keras.optimizers.RMSprop(learning_rate=0.1) on var1 = 10, loss var1^2/2.
  Quadratic m({10.f, 10.f});
  absl::StatusOr<UpdateNodes> nodes =
      BuildUpdates(optimizers::RMSprop({.learning_rate = 0.1f}), {m.w},
                   {TensorShape({2})}, {m.grad}, {}, "m", m.session);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_TRUE(m.session.Run({}, {}, {nodes->train_op}).ok());
  EXPECT_NEAR(m.Value()[0], 9.683772f, 1e-5f);
}

TEST(RMSprop, DefaultsMatchKerasStepByStep) { ExpectMatchesKeras({}); }

TEST(RMSprop, MomentumMatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.01f, .momentum = 0.9f});
}

TEST(RMSprop, CenteredMatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.01f, .centered = true});
}

TEST(RMSprop, CenteredWithMomentumMatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.01f,
                      .rho = 0.8f,
                      .momentum = 0.5f,
                      .centered = true});
}

TEST(RMSprop, DefaultsAreKeras3s) {
  const RMSpropOptions o;
  EXPECT_EQ(o.learning_rate, 0.001f);
  EXPECT_EQ(o.rho, 0.9f);
  EXPECT_EQ(o.momentum, 0.f);
  EXPECT_EQ(o.epsilon, 1e-7f);
  EXPECT_FALSE(o.centered);
}

TEST(RMSprop, MakesOnlyTheSlotsKerasMakes) {
  Quadratic plain({1.f, 1.f});
  ASSERT_TRUE(BuildUpdates(optimizers::RMSprop(), {plain.w}, {TensorShape({2})},
                           {plain.grad}, {}, "m", plain.session)
                  .ok());
  EXPECT_TRUE(plain.g.FindNode("m/RMSprop/w/velocity").has_value());
  EXPECT_FALSE(plain.g.FindNode("m/RMSprop/w/momentum").has_value());
  EXPECT_FALSE(plain.g.FindNode("m/RMSprop/w/average_gradient").has_value());
  Quadratic full({1.f, 1.f});
  ASSERT_TRUE(
      BuildUpdates(optimizers::RMSprop({.momentum = 0.9f, .centered = true}),
                   {full.w}, {TensorShape({2})}, {full.grad}, {}, "m",
                   full.session)
          .ok());
  EXPECT_TRUE(full.g.FindNode("m/RMSprop/w/momentum").has_value());
  EXPECT_TRUE(full.g.FindNode("m/RMSprop/w/average_gradient").has_value());
}

TEST(RMSprop, RefusesEpsilonZeroNamingTheOptionAndValue) {
  absl::Status s = CheckOptimizer(optimizers::RMSprop({.epsilon = 0.f}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("RMSprop epsilon must be finite and > 0, got 0"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
