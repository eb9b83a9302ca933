// bench/eigen_mlp.cc
#include "bench/eigen_mlp.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace graphgc::bench {

EigenMlp::EigenMlp(const RowMatrix& w1, const RowMatrix& w2, AdamOptions adam)
    : adam_(adam) {
  assert(w1.rows() == kIn && w1.cols() == kHidden);
  assert(w2.rows() == kHidden && w2.cols() == kOut);
  params_.setZero();
  m_.setZero();
  v_.setZero();
  std::copy(w1.data(), w1.data() + kIn * kHidden, &params_[kW1]);
  for (int j = 0; j < kHidden; ++j)
    std::copy(w2.data() + j * kOut, w2.data() + (j + 1) * kOut,
              &params_[kW2 + j * kOutPad]);
  w2t_ = Eigen::Map<const Rows_<kHidden, kOutPad>>(&params_[kW2]).transpose();
}

float EigenMlp::Step(const RowMatrix& x, std::span<const int32_t> labels) {
  const int rows = static_cast<int>(labels.size());
  assert(rows >= 1 && rows <= kMaxBatch && x.rows() == rows && x.cols() == kIn);
  // Fixed-size rows: Eigen evaluates each update below as whole packets.
  using HRow = Eigen::Array<float, 1, kHidden>;
  using ORow = Eigen::Array<float, 1, kOutPad>;
  using ConstH = Eigen::Map<const HRow>;
  using ConstO = Eigen::Map<const ORow>;
  const float* xp = x.data();
  const float* w1 = &params_[kW1];
  const float* w2 = &params_[kW2];
  // Forward: h = relu(x W1 + b1), logits = h W2 + b2, a row at a time, each
  // accumulated in registers.
  for (int r = 0; r < rows; ++r) {
    HRow h = ConstH(&params_[kB1]);
    for (int k = 0; k < kIn; ++k) {
      h += xp[r * kIn + k] * ConstH(w1 + k * kHidden);
    }
    h = h.max(0.f);
    h_.row(r) = h;
    // Four independent sums: one chain of 64 multiply-adds would wait on
    // each one's latency.
    ORow z[4];
    for (int q = 0; q < 4; ++q) z[q] = h[q] * ConstO(w2 + q * kOutPad);
    for (int j = 4; j < kHidden; j += 4) {
      for (int q = 0; q < 4; ++q) {
        z[q] += h[j + q] * ConstO(w2 + (j + q) * kOutPad);
      }
    }
    z[0] += z[1] + z[2] + z[3] + ConstO(&params_[kB2]);
    z[0] -= z[0].head<kOut>().maxCoeff();
    // The padding's logits: exp gives them 0.
    z[0].tail<kOutPad - kOut>().setConstant(-INFINITY);
    probs_.row(r) = z[0];
  }
  // Softmax: one vectorised exp over the batch's rows as one flat array.
  Eigen::Map<Eigen::ArrayXf> e(probs_.data(), rows * kOutPad);
  e = e.exp();
  float loss = 0;
  const float inv_rows = 1.f / static_cast<float>(rows);
  for (int r = 0; r < rows; ++r) {
    auto p = probs_.row(r);
    const float sum = p.head<kOut>().sum();
    loss += std::log(sum) - std::log(p[labels[r]]);
    // p becomes d(loss)/d(logits) = (softmax - onehot) / rows.
    p *= inv_rows / sum;
    p[labels[r]] -= inv_rows;
  }
  loss *= inv_rows;
  // Backward, a sample at a time, each product a row update.
  grads_.setZero();
  Eigen::Map<ORow> gb2(&grads_[kB2]);
  Eigen::Map<HRow> gb1(&grads_[kB1]);
  // d(W2) = h^T d(logits): four rows of it at a time summed over the batch
  // in registers.
  for (int j = 0; j < kHidden; j += 4) {
    ORow g[4];
    for (int q = 0; q < 4; ++q) g[q].setZero();
    for (int r = 0; r < rows; ++r) {
      const ConstO d(&probs_(r, 0));
      for (int q = 0; q < 4; ++q) g[q] += h_(r, j + q) * d;
    }
    for (int q = 0; q < 4; ++q) {
      Eigen::Map<ORow> gw2(&grads_[kW2 + (j + q) * kOutPad]);
      gw2 = g[q];
    }
  }
  for (int r = 0; r < rows; ++r) {
    const ORow d = probs_.row(r);
    const float* __restrict h = &h_(r, 0);
    gb2 += d;
    HRow dh = d[0] * w2t_.row(0);
    for (int o = 1; o < kOut; ++o) dh += d[o] * w2t_.row(o);
    for (int j = 0; j < kHidden; ++j) dh[j] = h[j] > 0.f ? dh[j] : 0.f;
    gb1 += dh;
    for (int k = 0; k < kIn; ++k) {
      Eigen::Map<HRow>(&grads_[kW1 + k * kHidden]) += xp[r * kIn + k] * dh;
    }
  }
  Adam();
  return loss;
}

void EigenMlp::Adam() {
  beta_1_power_ *= adam_.beta_1;
  beta_2_power_ *= adam_.beta_2;
  const float lr_t =
      adam_.learning_rate * std::sqrt(1 - beta_2_power_) / (1 - beta_1_power_);
  // One pass over the flat arrays, a packet at a time (Eigen's packet
  // primitives: the compiler vectorises no sqrt that may set errno).
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<float>::type;
  constexpr int kPacket = ei::packet_traits<float>::size;
  const Packet one_minus_b1 = ei::pset1<Packet>(1 - adam_.beta_1);
  const Packet one_minus_b2 = ei::pset1<Packet>(1 - adam_.beta_2);
  const Packet eps = ei::pset1<Packet>(adam_.epsilon);
  const Packet lr = ei::pset1<Packet>(lr_t);
  float* p = params_.data();
  float* m = m_.data();
  float* v = v_.data();
  const float* g = grads_.data();
  int i = 0;
  for (; i + kPacket <= kParams; i += kPacket) {
    const Packet gi = ei::ploadu<Packet>(g + i);
    Packet mi = ei::ploadu<Packet>(m + i);
    Packet vi = ei::ploadu<Packet>(v + i);
    mi = ei::pmadd(ei::psub(gi, mi), one_minus_b1, mi);
    vi = ei::pmadd(ei::psub(ei::pmul(gi, gi), vi), one_minus_b2, vi);
    ei::pstoreu(m + i, mi);
    ei::pstoreu(v + i, vi);
    ei::pstoreu(p + i, ei::psub(ei::ploadu<Packet>(p + i),
                                ei::pdiv(ei::pmul(lr, mi),
                                         ei::padd(ei::psqrt(vi), eps))));
  }
  for (; i < kParams; ++i) {
    m[i] += (g[i] - m[i]) * (1 - adam_.beta_1);
    v[i] += (g[i] * g[i] - v[i]) * (1 - adam_.beta_2);
    p[i] -= lr_t * m[i] / (std::sqrt(v[i]) + adam_.epsilon);
  }
  w2t_ = Eigen::Map<const Rows_<kHidden, kOutPad>>(&params_[kW2]).transpose();
}

RowMatrix GlorotUniform(int fan_in, int fan_out, std::mt19937& rng) {
  const float limit = std::sqrt(6.f / static_cast<float>(fan_in + fan_out));
  std::uniform_real_distribution<float> u(-limit, limit);
  RowMatrix w(fan_in, fan_out);
  for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = u(rng);
  return w;
}

}  // namespace graphgc::bench
