// Adadelta (models/optimizers/adadelta.cc) step by step against Keras 3's
// update (keras/src/optimizers/adadelta.py), computed here.
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

ReferenceStep KerasAdadelta(AdadeltaOptions o) {
  return [o, acc_g = 0.f, acc_d = 0.f](float& w, float g, int) mutable {
    const auto rms = [&](float x) { return std::sqrt(x + o.epsilon); };
    acc_g = o.rho * acc_g + (1 - o.rho) * g * g;
    const float delta = -rms(acc_d) * g / rms(acc_g);
    acc_d = o.rho * acc_d + (1 - o.rho) * delta * delta;
    w += o.learning_rate * delta;
  };
}

void ExpectMatchesKeras(const AdadeltaOptions& o) {
  ExpectStepsMatch(optimizers::Adadelta(o),
                   {KerasAdadelta(o), KerasAdadelta(o)});
}

TEST(Adadelta, MatchesKerasStepByStep) {
  // A large epsilon and rate so that the steps are visible.
  ExpectMatchesKeras({.learning_rate = 1.f, .epsilon = 0.01f});
}

TEST(Adadelta, OtherRhoMatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 2.f, .rho = 0.5f, .epsilon = 1e-3f});
}

TEST(Adadelta, DefaultsAreKeras3s) {
  const AdadeltaOptions o;
  EXPECT_EQ(o.learning_rate, 0.001f);
  EXPECT_EQ(o.rho, 0.95f);
  EXPECT_EQ(o.epsilon, 1e-7f);
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
