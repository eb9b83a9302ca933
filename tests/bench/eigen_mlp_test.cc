#include "bench/eigen_mlp.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace graphgc::bench {
namespace {

RowMatrix RandomBatch(int rows, int cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0, 1);
  RowMatrix x(rows, cols);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = u(rng);
  return x;
}

TEST(EigenMlp, WithZeroWeightsTheFirstLossIsTheLogOfTheClassCount) {
  EigenMlp mlp(RowMatrix::Zero(10, 64), RowMatrix::Zero(64, 10));
  std::mt19937 rng(1);
  const std::vector<int32_t> labels{0, 3, 9, 5};
  EXPECT_NEAR(mlp.Step(RandomBatch(4, 10, rng), labels), std::log(10.f), 1e-5);
}

TEST(EigenMlp, RepeatedStepsOnOneBatchLowerItsLoss) {
  std::mt19937 rng(2);
  EigenMlp mlp(GlorotUniform(10, 64, rng), GlorotUniform(64, 10, rng),
               {.learning_rate = 0.01f});
  const RowMatrix x = RandomBatch(32, 10, rng);
  std::vector<int32_t> labels(32);
  for (int i = 0; i < 32; ++i) labels[i] = i % 10;
  const float first = mlp.Step(x, labels);
  float last = first;
  for (int i = 0; i < 200; ++i) last = mlp.Step(x, labels);
  EXPECT_LT(last, first * 0.5f) << "first " << first << ", last " << last;
}

TEST(GlorotUniform, DrawsWithinKerasLimitWithTheRequestedShape) {
  std::mt19937 rng(3);
  const RowMatrix w = GlorotUniform(10, 64, rng);
  ASSERT_EQ(w.rows(), 10);
  ASSERT_EQ(w.cols(), 64);
  const float limit = std::sqrt(6.f / 74.f);
  EXPECT_LE(w.cwiseAbs().maxCoeff(), limit);
  EXPECT_GT(w.cwiseAbs().maxCoeff(), limit * 0.5f);
}

}  // namespace
}  // namespace graphgc::bench
