// Nadam (models/optimizers/nadam.cc) step by step against Keras 3's
// update (keras/src/optimizers/nadam.py), computed here.
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

// Keras's u_product is one scalar per optimizer, advanced once per step
// before the weights' updates; each element's reference keeps its own copy,
// which advances identically.
ReferenceStep KerasNadam(NadamOptions o) {
  return [o, m = 0.f, v = 0.f, u_product = 1.f](float& w, float g,
                                                int t) mutable {
    const float u_t = o.beta_1 * (1 - 0.5f * std::pow(0.96f, float(t)));
    const float u_t_1 = o.beta_1 * (1 - 0.5f * std::pow(0.96f, float(t + 1)));
    u_product *= u_t;
    const float u_product_t_1 = u_product * u_t_1;
    const float beta_2_power = std::pow(o.beta_2, float(t));
    m += (g - m) * (1 - o.beta_1);
    v += (g * g - v) * (1 - o.beta_2);
    const float m_hat =
        u_t_1 * m / (1 - u_product_t_1) + (1 - u_t) * g / (1 - u_product);
    const float v_hat = v / (1 - beta_2_power);
    w -= m_hat * o.learning_rate / (std::sqrt(v_hat) + o.epsilon);
  };
}

void ExpectMatchesKeras(const NadamOptions& o) {
  ExpectStepsMatch(optimizers::Nadam(o), {KerasNadam(o), KerasNadam(o)});
}

TEST(Nadam, MatchesKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.1f});
}

TEST(Nadam, OtherBetasMatchKerasStepByStep) {
  ExpectMatchesKeras({.learning_rate = 0.05f, .beta_1 = 0.5f, .beta_2 = 0.9f});
}

TEST(Nadam, DefaultsAreKeras3s) {
  const NadamOptions o;
  EXPECT_EQ(o.learning_rate, 0.001f);
  EXPECT_EQ(o.beta_1, 0.9f);
  EXPECT_EQ(o.beta_2, 0.999f);
  EXPECT_EQ(o.epsilon, 1e-7f);
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
