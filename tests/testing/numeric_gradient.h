// ExpectSgdStepFollowsNumericalGradient: that one full-batch SGD step of a
// compiled model (Sequential or Functional: SGD with `learning_rate`, no
// momentum) moves every weight by -learning_rate times the loss's gradient,
// the gradient measured by central differences of Evaluate's loss. The
// model's forward path must be the same in training and inference.
#ifndef GRAPHGC_TESTS_TESTING_NUMERIC_GRADIENT_H_
#define GRAPHGC_TESTS_TESTING_NUMERIC_GRADIENT_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace testing_internal {

inline std::vector<float> FloatValues(const Tensor& t) {
  const auto d = t.data<float>();
  return std::vector<float>(d.begin(), d.end());
}

template <typename Model>
void ExpectSgdStepFollowsNumericalGradient(Model& m, const Tensor& x,
                                           const Tensor& y,
                                           float learning_rate) {
  const int batch = static_cast<int>(x.shape()[0]);
  const std::vector<Tensor> w0 = m.GetWeights();
  auto loss_at = [&](const std::vector<Tensor>& w) {
    EXPECT_TRUE(m.SetWeights(w).ok());
    return static_cast<double>(m.Evaluate(x, y, batch).value().at("loss"));
  };
  auto with = [](const Tensor& t, std::vector<float> values) {
    return Tensor::FromData<float>(t.shape(), values).value();
  };
  std::vector<std::vector<double>> numeric(w0.size());
  const float h = 2e-3f;
  for (size_t t = 0; t < w0.size(); ++t) {
    for (int64_t i = 0; i < w0[t].num_elements(); ++i) {
      std::vector<Tensor> plus = w0, minus = w0;
      std::vector<float> p = FloatValues(w0[t]), q = FloatValues(w0[t]);
      p[i] += h;
      q[i] -= h;
      plus[t] = with(w0[t], p);
      minus[t] = with(w0[t], q);
      numeric[t].push_back((loss_at(plus) - loss_at(minus)) / (2 * h));
    }
  }
  ASSERT_TRUE(m.SetWeights(w0).ok());
  ASSERT_TRUE(
      m.Fit(x, y, {.batch_size = batch, .shuffle = false, .verbose = 0}).ok());
  const std::vector<Tensor> w1 = m.GetWeights();
  for (size_t t = 0; t < w0.size(); ++t) {
    for (int64_t i = 0; i < w0[t].num_elements(); ++i) {
      const double step = FloatValues(w0[t])[i] - FloatValues(w1[t])[i];
      EXPECT_NEAR(step / learning_rate, numeric[t][i],
                  2e-2 + 2e-2 * std::abs(numeric[t][i]))
          << "weight " << t << " element " << i;
    }
  }
}

}  // namespace testing_internal
}  // namespace graphgc

#endif  // GRAPHGC_TESTS_TESTING_NUMERIC_GRADIENT_H_
