// Adamax (models/optimizers/adamax.cc) step by step against Keras 3's
// update (keras/src/optimizers/adamax.py), computed here.
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

ReferenceStep KerasAdamax(AdamaxOptions o) {
  return [o, m = 0.f, u = 0.f](float& w, float g, int t) mutable {
    const float beta_1_power = std::pow(o.beta_1, float(t));
    m += (g - m) * (1 - o.beta_1);
    u = std::max(o.beta_2 * u, std::fabs(g));
    w -= o.learning_rate * m / ((1 - beta_1_power) * (u + o.epsilon));
  };
}

void ExpectMatchesKeras(const AdamaxOptions& o) {
  ExpectStepsMatch(optimizers::Adamax(o), {KerasAdamax(o), KerasAdamax(o)});
}

TEST(Adamax, MatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.1f});
}

TEST(Adamax, SmallBeta2MatchesKerasStepByStep) {
  // u then follows |g| down, so both arms of the maximum are taken.
  ExpectMatchesKeras({.learning_rate = 0.3f, .beta_1 = 0.5f, .beta_2 = 0.2f});
}

TEST(Adamax, DefaultsAreKeras3s) {
  const AdamaxOptions o;
  EXPECT_EQ(o.learning_rate, 0.001f);
  EXPECT_EQ(o.beta_1, 0.9f);
  EXPECT_EQ(o.beta_2, 0.999f);
  EXPECT_EQ(o.epsilon, 1e-7f);
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
