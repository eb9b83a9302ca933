// bench/eigen_mlp.cc
#include "bench/eigen_mlp.h"

#include <cmath>
#include <utility>

namespace graphgc::bench {

EigenMlp::EigenMlp(RowMatrix w1, RowMatrix w2, AdamOptions adam)
    : adam_(adam),
      w1_(std::move(w1)),
      b1_(RowMatrix::Zero(1, w1_.cols())),
      w2_(std::move(w2)),
      b2_(RowMatrix::Zero(1, w2_.cols())) {
  for (const RowMatrix* p : {&w1_, &b1_, &w2_, &b2_}) {
    slots_.push_back({RowMatrix::Zero(p->rows(), p->cols()),
                      RowMatrix::Zero(p->rows(), p->cols())});
  }
}

void EigenMlp::Update(RowMatrix& w, Slot& slot, const RowMatrix& grad,
                      float lr_t) {
  slot.m += (grad - slot.m) * (1 - adam_.beta_1);
  slot.v += (grad.array().square().matrix() - slot.v) * (1 - adam_.beta_2);
  w.array() -= lr_t * slot.m.array() / (slot.v.array().sqrt() + adam_.epsilon);
}

float EigenMlp::Step(const RowMatrix& x, std::span<const int32_t> labels) {
  const auto rows = static_cast<Eigen::Index>(labels.size());
  beta_1_power_ *= adam_.beta_1;
  beta_2_power_ *= adam_.beta_2;
  // Forward.
  const RowMatrix pre = (x * w1_).rowwise() + b1_.row(0);
  const RowMatrix h = pre.cwiseMax(0.f);
  const RowMatrix logits = (h * w2_).rowwise() + b2_.row(0);
  const Eigen::VectorXf row_max = logits.rowwise().maxCoeff();
  const RowMatrix e = (logits.colwise() - row_max).array().exp().matrix();
  const Eigen::VectorXf sums = e.rowwise().sum();
  RowMatrix probs = e.array().colwise() / sums.array();
  float loss = 0;
  for (Eigen::Index i = 0; i < rows; ++i) {
    loss -= std::log(probs(i, labels[i]));
  }
  loss /= static_cast<float>(rows);
  // Backward: probs becomes d(loss)/d(logits).
  for (Eigen::Index i = 0; i < rows; ++i) probs(i, labels[i]) -= 1.f;
  probs /= static_cast<float>(rows);
  const RowMatrix gw2 = h.transpose() * probs;
  const RowMatrix gb2 = probs.colwise().sum();
  const RowMatrix dh =
      (probs * w2_.transpose())
          .cwiseProduct((pre.array() > 0.f).cast<float>().matrix());
  const RowMatrix gw1 = x.transpose() * dh;
  const RowMatrix gb1 = dh.colwise().sum();
  // Adam.
  const float lr_t =
      adam_.learning_rate * std::sqrt(1 - beta_2_power_) / (1 - beta_1_power_);
  Update(w1_, slots_[0], gw1, lr_t);
  Update(b1_, slots_[1], gb1, lr_t);
  Update(w2_, slots_[2], gw2, lr_t);
  Update(b2_, slots_[3], gb2, lr_t);
  return loss;
}

RowMatrix GlorotUniform(int fan_in, int fan_out, std::mt19937& rng) {
  const float limit = std::sqrt(6.f / static_cast<float>(fan_in + fan_out));
  std::uniform_real_distribution<float> u(-limit, limit);
  RowMatrix w(fan_in, fan_out);
  for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = u(rng);
  return w;
}

}  // namespace graphgc::bench
