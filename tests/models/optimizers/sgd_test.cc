// SGD (models/optimizers/sgd.cc) with momentum and Nesterov step by step
// against Keras 3's update (keras/src/optimizers/sgd.py), computed here.
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

// m = momentum * m - lr * g; Nesterov: w += momentum * m - lr * g, else
// w += m.
ReferenceStep KerasSGD(SGDOptions o) {
  return [o, m = 0.f](float& w, float g, int) mutable {
    m = o.momentum * m - o.learning_rate * g;
    w += o.nesterov ? o.momentum * m - o.learning_rate * g : m;
  };
}

void ExpectMatchesKeras(const SGDOptions& o) {
  ExpectStepsMatch(optimizers::SGD(o), {KerasSGD(o), KerasSGD(o)});
}

TEST(SGD, PlainMatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.1f});
}

TEST(SGD, MomentumMatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.05f, .momentum = 0.9f});
}

TEST(SGD, NesterovMatchesKerasStepByStep) {
  ExpectMatchesKeras(
      {.learning_rate = 0.05f, .momentum = 0.9f, .nesterov = true});
}

TEST(SGD, NesterovWithoutMomentumIsPlainSGD) {
  ExpectMatchesKeras({.learning_rate = 0.1f, .nesterov = true});
}

TEST(SGD, RefusesMomentumAboveOne) {
  absl::Status s = CheckOptimizer(optimizers::SGD({.momentum = 1.5f}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("SGD momentum must be in [0, 1], got 1.5"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
