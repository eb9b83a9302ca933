// bench/eigen_mlp.h
//
// The seed model's training step written by hand with plain Eigen: the
// reference the graph runtime is measured against (mlp_bench times one step,
// models_bench a whole seed epoch). Dense(10 -> 64, relu), Dense(64 -> 10),
// softmax cross-entropy on integer labels averaged over the batch, Adam (the
// options of graphgc's optimizers::Adam), batches of at most 32 rows.
//
// Written to be fast, so that a ratio against it means something: the sizes
// are compile-time constants, every buffer is a member of fixed size (a
// step allocates nothing), activations are kept one sample per row so that
// every product is a run of multiply-adds along a contiguous row of 64 or
// 10 floats (no reductions across the batch in an inner loop), bias and
// ReLU are applied while the row is in cache, and the parameters and their
// gradients are each one flat array [W1 | b1 | W2 | b2], which Adam updates
// in one vectorised pass. Not thread-safe: one object per thread.
#ifndef GRAPHGC_BENCH_EIGEN_MLP_H_
#define GRAPHGC_BENCH_EIGEN_MLP_H_

#include <cstdint>
#include <random>
#include <span>

#include "Eigen/Core"
#include "models/optimizers.h"

namespace graphgc::bench {

using RowMatrix =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class EigenMlp {
 public:
  static constexpr int kIn = 10, kHidden = 64, kOut = 10, kMaxBatch = 32;

  // w1 [kIn, kHidden] and w2 [kHidden, kOut] (asserted); the biases start
  // at zero, as do Adam's slots.
  EigenMlp(const RowMatrix& w1, const RowMatrix& w2, AdamOptions adam = {});

  // One Adam step on the batch x [rows, kIn] (1 <= rows <= kMaxBatch),
  // labels[i] in [0, kOut) for each row; returns the batch's mean loss.
  // labels.size() must be x.rows() (asserted).
  float Step(const RowMatrix& x, std::span<const int32_t> labels);

 private:
  // The output layer is kept padded to kOutPad columns (zero weights and
  // bias, logits that the softmax gives probability 0), so that each of
  // its row updates is one full vector of 16 floats, not 10 scalar ones.
  static constexpr int kOutPad = 16;
  static constexpr int kW1 = 0, kB1 = kW1 + kIn * kHidden, kW2 = kB1 + kHidden,
                       kB2 = kW2 + kHidden * kOutPad, kParams = kB2 + kOutPad;
  using Params = Eigen::Array<float, kParams, 1>;
  template <int Rows, int Cols>
  using Rows_ = Eigen::Array<float, Rows, Cols, Eigen::RowMajor>;

  void Adam();

  AdamOptions adam_;
  float beta_1_power_ = 1, beta_2_power_ = 1;
  // Parameters, their gradients and Adam's slots, each [W1 | b1 | W2 | b2]
  // with W1 [kIn, kHidden] and W2 [kHidden, kOutPad] row-major.
  Params params_, grads_, m_, v_;
  // W2 transposed [kOutPad, kHidden], refreshed after each update: the
  // backward product d(logits) W2^T reads it a row at a time.
  Rows_<kOutPad, kHidden> w2t_;
  // Activations, one sample per row.
  Rows_<kMaxBatch, kHidden> h_;
  Rows_<kMaxBatch, kOutPad> probs_;
};

// Weights drawn as Keras's Dense draws its kernel (Glorot uniform).
RowMatrix GlorotUniform(int fan_in, int fan_out, std::mt19937& rng);

}  // namespace graphgc::bench

#endif  // GRAPHGC_BENCH_EIGEN_MLP_H_
