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
  pre_.noalias() = x * w1_;
  pre_.rowwise() += b1_.row(0);
  h_ = pre_.cwiseMax(0.f);
  probs_.noalias() = h_ * w2_;
  probs_.rowwise() += b2_.row(0);  // the logits
  row_max_ = probs_.rowwise().maxCoeff();
  probs_.colwise() -= row_max_;
  probs_ = probs_.array().exp();
  sums_ = probs_.rowwise().sum();
  probs_.array().colwise() /= sums_.array();
  float loss = 0;
  for (Eigen::Index i = 0; i < rows; ++i) {
    loss -= std::log(probs_(i, labels[i]));
  }
  loss /= static_cast<float>(rows);
  // Backward: probs_ becomes d(loss)/d(logits).
  for (Eigen::Index i = 0; i < rows; ++i) probs_(i, labels[i]) -= 1.f;
  probs_ /= static_cast<float>(rows);
  gw2_.noalias() = h_.transpose() * probs_;
  gb2_ = probs_.colwise().sum();
  dh_.noalias() = probs_ * w2_.transpose();
  dh_.array() *= (pre_.array() > 0.f).cast<float>();
  gw1_.noalias() = x.transpose() * dh_;
  gb1_ = dh_.colwise().sum();
  // Adam.
  const float lr_t =
      adam_.learning_rate * std::sqrt(1 - beta_2_power_) / (1 - beta_1_power_);
  Update(w1_, slots_[0], gw1_, lr_t);
  Update(b1_, slots_[1], gb1_, lr_t);
  Update(w2_, slots_[2], gw2_, lr_t);
  Update(b2_, slots_[3], gb2_, lr_t);
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
