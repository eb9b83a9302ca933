// Lion (models/optimizers/lion.cc) step by step against Keras 3's update
// (keras/src/optimizers/lion.py), computed here.
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/optimizer_registry.h"
#include "models/optimizers.h"
#include "tests/testing/optimizer_steps.h"

namespace graphgc {
namespace models_internal {
namespace {

using ::graphgc::testing::ExpectStepsMatch;
using ::graphgc::testing::Quadratic;
using ::graphgc::testing::ReferenceStep;

ReferenceStep KerasLion(LionOptions o) {
  return [o, m = 0.f](float& w, float g, int) mutable {
    const float c = m * o.beta_1 + g * (1 - o.beta_1);
    w -= o.learning_rate * float((c > 0) - (c < 0));
    m = m * o.beta_2 + g * (1 - o.beta_2);
  };
}

TEST(Lion, MatchesKerasStepByStep) {
  const LionOptions o{.learning_rate = 0.3f};
  // -0.5 oscillates around zero, so the sign flips.
  ExpectStepsMatch(optimizers::Lion(o), {KerasLion(o), KerasLion(o)});
}

TEST(Lion, ZeroGradientAndMomentumLeaveTheWeight) {
  const LionOptions o{.learning_rate = 0.3f};
  ExpectStepsMatch(optimizers::Lion(o), {KerasLion(o), KerasLion(o)},
                   {0.f, 1.f});
}

TEST(Lion, DefaultsAreKeras3s) {
  const LionOptions o;
  EXPECT_EQ(o.learning_rate, 0.001f);
  EXPECT_EQ(o.beta_1, 0.9f);
  EXPECT_EQ(o.beta_2, 0.99f);
}

TEST(Lion, RefusesBeta1ZeroAsKerasDoes) {
  absl::Status s = CheckOptimizer(optimizers::Lion({.beta_1 = 0.f}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Lion beta_1 must be in (0, 1], got 0"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
