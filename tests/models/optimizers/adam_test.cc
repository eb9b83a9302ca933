// Adam (models/optimizers/adam.cc), plain and with amsgrad, step by step
// against Keras 3's update (keras/src/optimizers/adam.py), computed here.
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

// alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t); m += (g - m) * (1 -
// beta_1); v += (g^2 - v) * (1 - beta_2); amsgrad: v_hat = max(v_hat, v),
// used for v; w -= m * alpha / (sqrt(v) + epsilon).
ReferenceStep KerasAdam(AdamOptions o) {
  return [o, m = 0.f, v = 0.f, v_hat = 0.f](float& w, float g, int t) mutable {
    const float alpha = o.learning_rate *
                        std::sqrt(1 - std::pow(o.beta_2, float(t))) /
                        (1 - std::pow(o.beta_1, float(t)));
    m += (g - m) * (1 - o.beta_1);
    v += (g * g - v) * (1 - o.beta_2);
    float denom = v;
    if (o.amsgrad) {
      v_hat = std::max(v_hat, v);
      denom = v_hat;
    }
    w -= m * alpha / (std::sqrt(denom) + o.epsilon);
  };
}

void ExpectMatchesKeras(const AdamOptions& o) {
  ExpectStepsMatch(optimizers::Adam(o), {KerasAdam(o), KerasAdam(o)});
}

TEST(Adam, MatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.1f});
}

TEST(Adam, AmsgradMatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.1f, .amsgrad = true});
}

TEST(Adam, AmsgradDividesByTheLargestVelocitySeen) {
  // With beta_2 small, v follows g^2 down as w shrinks while v_hat keeps
  // the first, larger value: the amsgrad step is smaller than Adam's.
  const AdamOptions plain{.learning_rate = 0.5f, .beta_2 = 0.1f};
  AdamOptions ams = plain;
  ams.amsgrad = true;
  ExpectMatchesKeras(ams);
  Quadratic a({1.f, 1.f}), b({1.f, 1.f});
  auto na = a.Build(optimizers::Adam(plain));
  auto nb = b.Build(optimizers::Adam(ams));
  ASSERT_TRUE(na.ok() && nb.ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(a.session.Run({}, {}, {na->train_op}).ok());
    ASSERT_TRUE(b.session.Run({}, {}, {nb->train_op}).ok());
  }
  EXPECT_GT(b.Value()[0], a.Value()[0]);
}

TEST(Adam, AmsgradKeepsAThirdSlot) {
  Quadratic m({1.f, 1.f});
  ASSERT_TRUE(m.Build(optimizers::Adam({.amsgrad = true})).ok());
  EXPECT_TRUE(m.g.FindNode("m/Adam/w/v_hat").has_value());
  const OptimizerKind* kind = FindOptimizerKindByName("Adam");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->slots_per_weight(optimizers::Adam({.amsgrad = true})), 3);
  EXPECT_EQ(kind->slots_per_weight(optimizers::Adam()), 2);
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
