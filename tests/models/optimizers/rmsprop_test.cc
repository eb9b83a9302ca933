// RMSprop (models/optimizers/rmsprop.cc) step by step against Keras 3's
// update (keras/src/optimizers/rmsprop.py), computed here.
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/optimizer_registry.h"
#include "models/optimizers.h"
#include "runtime/tensor.h"
#include "tests/testing/optimizer_steps.h"

namespace graphgc {
namespace models_internal {
namespace {

using ::graphgc::testing::ExpectStepsMatch;
using ::graphgc::testing::Quadratic;
using ::graphgc::testing::ReferenceStep;

// Keras 3's RMSprop.update_step for one weight, in float as Keras runs it.
ReferenceStep KerasRMSprop(RMSpropOptions o) {
  return [o, velocity = 0.f, momentum = 0.f, average_grad = 0.f](
             float& w, float g, int) mutable {
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
  };
}

void ExpectMatchesKeras(const RMSpropOptions& o) {
  ExpectStepsMatch(optimizers::RMSprop(o), {KerasRMSprop(o), KerasRMSprop(o)},
                   {10.f, -0.5f}, /*steps=*/5);
}

TEST(RMSprop, KerasDocExampleFirstStep) {
  // keras.optimizers.RMSprop(learning_rate=0.1) on var1 = 10, loss var1^2/2.
  Quadratic m({10.f, 10.f});
  absl::StatusOr<UpdateNodes> nodes =
      m.Build(optimizers::RMSprop({.learning_rate = 0.1f}));
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
  ASSERT_TRUE(plain.Build(optimizers::RMSprop()).ok());
  EXPECT_TRUE(plain.g.FindNode("m/RMSprop/w/velocity").has_value());
  EXPECT_FALSE(plain.g.FindNode("m/RMSprop/w/momentum").has_value());
  EXPECT_FALSE(plain.g.FindNode("m/RMSprop/w/average_gradient").has_value());
  Quadratic full({1.f, 1.f});
  ASSERT_TRUE(
      full.Build(optimizers::RMSprop({.momentum = 0.9f, .centered = true}))
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
