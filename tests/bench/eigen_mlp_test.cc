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

// The step computed the obvious way, in double: forward, softmax
// cross-entropy, backward, Adam; returns the loss before the update.
double NaiveStep(const RowMatrix& x, const std::vector<int32_t>& labels,
                 Eigen::MatrixXd& w1, Eigen::VectorXd& b1, Eigen::MatrixXd& w2,
                 Eigen::VectorXd& b2, std::vector<Eigen::MatrixXd>& m,
                 std::vector<Eigen::MatrixXd>& v, int t) {
  const Eigen::MatrixXd xd = x.cast<double>();
  const double n = static_cast<double>(x.rows());
  Eigen::MatrixXd pre = (xd * w1).rowwise() + b1.transpose();
  Eigen::MatrixXd h = pre.cwiseMax(0.0);
  Eigen::MatrixXd z = (h * w2).rowwise() + b2.transpose();
  double loss = 0;
  Eigen::MatrixXd d(z.rows(), z.cols());
  for (Eigen::Index r = 0; r < z.rows(); ++r) {
    const double mx = z.row(r).maxCoeff();
    const Eigen::RowVectorXd e = (z.row(r).array() - mx).exp();
    const double sum = e.sum();
    loss += std::log(sum) - (z(r, labels[r]) - mx);
    d.row(r) = e / sum;
    d(r, labels[r]) -= 1;
  }
  d /= n;
  Eigen::MatrixXd dh =
      (d * w2.transpose()).array() * (pre.array() > 0).cast<double>();
  std::vector<Eigen::MatrixXd> grads{
      xd.transpose() * dh, dh.colwise().sum().transpose(), h.transpose() * d,
      d.colwise().sum().transpose()};
  std::vector<Eigen::MatrixXd*> params{&w1, nullptr, &w2, nullptr};
  Eigen::MatrixXd b1m = b1, b2m = b2;
  params[1] = &b1m;
  params[3] = &b2m;
  const double lr_t =
      0.01 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
  for (int i = 0; i < 4; ++i) {
    m[i] += (grads[i] - m[i]) * 0.1;
    v[i] += (grads[i].cwiseProduct(grads[i]) - v[i]) * 0.001;
    params[i]->array() -= lr_t * m[i].array() / (v[i].array().sqrt() + 1e-7);
  }
  b1 = b1m;
  b2 = b2m;
  return loss / n;
}

TEST(EigenMlp, EachStepsLossMatchesTheStepComputedPlainlyInDouble) {
  std::mt19937 rng(4);
  const RowMatrix w1 = GlorotUniform(10, 64, rng);
  const RowMatrix w2 = GlorotUniform(64, 10, rng);
  EigenMlp mlp(w1, w2, {.learning_rate = 0.01f});
  Eigen::MatrixXd dw1 = w1.cast<double>(), dw2 = w2.cast<double>();
  Eigen::VectorXd db1 = Eigen::VectorXd::Zero(64),
                  db2 = Eigen::VectorXd::Zero(10);
  std::vector<Eigen::MatrixXd> m{
      Eigen::MatrixXd::Zero(10, 64), Eigen::MatrixXd::Zero(64, 1),
      Eigen::MatrixXd::Zero(64, 10), Eigen::MatrixXd::Zero(10, 1)};
  std::vector<Eigen::MatrixXd> v = m;
  for (int t = 1; t <= 5; ++t) {
    const int rows = t == 5 ? 8 : 32;  // a short last batch too
    const RowMatrix x = RandomBatch(rows, 10, rng);
    std::vector<int32_t> labels(rows);
    for (int i = 0; i < rows; ++i) labels[i] = (i * 7 + t) % 10;
    const double expected = NaiveStep(x, labels, dw1, db1, dw2, db2, m, v, t);
    EXPECT_NEAR(mlp.Step(x, labels), expected, 1e-4) << "step " << t;
  }
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
