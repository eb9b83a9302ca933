// AdamW (models/optimizers/adamw.cc) step by step against Keras 3's
// update (keras/src/optimizers/adamw.py: Adam after the base optimizer's
// decoupled decay w -= w * weight_decay * lr), computed here.
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

ReferenceStep KerasAdamW(AdamWOptions o, float weight_decay) {
  return [o, weight_decay, m = 0.f, v = 0.f, v_hat = 0.f](float& w, float g,
                                                          int t) mutable {
    w -= w * weight_decay * o.learning_rate;
    const float alpha = o.learning_rate *
                        std::sqrt(1 - std::pow(o.beta_2, float(t))) /
                        (1 - std::pow(o.beta_1, float(t)));
    m += (g - m) * (1 - o.beta_1);
    v += (g * g - v) * (1 - o.beta_2);
    if (o.amsgrad) v_hat = std::max(v_hat, v);
    w -= m * alpha / (std::sqrt(o.amsgrad ? v_hat : v) + o.epsilon);
  };
}

TEST(AdamW, DefaultWeightDecayMatchesKerasStepByStep) {
  const AdamWOptions o{.learning_rate = 0.1f};
  ExpectStepsMatch(optimizers::AdamW(o),
                   {KerasAdamW(o, 0.004f), KerasAdamW(o, 0.004f)});
}

TEST(AdamW, GivenWeightDecayAndAmsgradMatchKerasStepByStep) {
  const AdamWOptions o{.learning_rate = 0.1f, .amsgrad = true};
  ExpectStepsMatch(optimizers::AdamW(o, {.weight_decay = 0.5f}),
                   {KerasAdamW(o, 0.5f), KerasAdamW(o, 0.5f)});
}

TEST(AdamW, DefaultsAreKeras3s) {
  const AdamWOptions o;
  EXPECT_EQ(o.learning_rate, 0.001f);
  EXPECT_EQ(o.beta_1, 0.9f);
  EXPECT_EQ(o.beta_2, 0.999f);
  EXPECT_EQ(o.epsilon, 1e-7f);
  EXPECT_FALSE(o.amsgrad);
  const OptimizerKind* kind = FindOptimizerKindByName("adamw");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->default_weight_decay, 0.004f);
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
