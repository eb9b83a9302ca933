// Adagrad (models/optimizers/adagrad.cc) step by step against Keras 3's
// update (keras/src/optimizers/adagrad.py), computed here.
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

ReferenceStep KerasAdagrad(AdagradOptions o) {
  return
      [o, acc = o.initial_accumulator_value](float& w, float g, int) mutable {
        acc += g * g;
        w -= o.learning_rate * g / std::sqrt(acc + o.epsilon);
      };
}

void ExpectMatchesKeras(const AdagradOptions& o) {
  ExpectStepsMatch(optimizers::Adagrad(o), {KerasAdagrad(o), KerasAdagrad(o)});
}

TEST(Adagrad, MatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.5f});
}

TEST(Adagrad, InitialAccumulatorValueMatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.5f, .initial_accumulator_value = 4.f});
}

TEST(Adagrad, DefaultsAreKeras3s) {
  const AdagradOptions o;
  EXPECT_EQ(o.learning_rate, 0.001f);
  EXPECT_EQ(o.initial_accumulator_value, 0.1f);
  EXPECT_EQ(o.epsilon, 1e-7f);
}

TEST(Adagrad, RefusesNegativeInitialAccumulatorValue) {
  absl::Status s =
      CheckOptimizer(optimizers::Adagrad({.initial_accumulator_value = -1}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Adagrad initial_accumulator_value"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
