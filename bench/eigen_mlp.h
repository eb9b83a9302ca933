// bench/eigen_mlp.h
//
// The seed model's training step written by hand with plain Eigen: the
// reference the graph runtime is measured against (mlp_bench times one step,
// models_bench a whole seed epoch). Dense(in -> hidden, relu), Dense(hidden
// -> out), softmax cross-entropy on integer labels averaged over the batch,
// Adam (the options of graphgc's optimizers::Adam). Buffers are reused
// across steps; products are Eigen's own (its lazy, coefficient-wise
// products measured 4x slower here at 32x10x64). Not thread-safe: one object
// per thread.
#ifndef GRAPHGC_BENCH_EIGEN_MLP_H_
#define GRAPHGC_BENCH_EIGEN_MLP_H_

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "Eigen/Core"
#include "models/optimizers.h"

namespace graphgc::bench {

using RowMatrix =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class EigenMlp {
 public:
  // w1 [in, hidden] and w2 [hidden, out]; the biases start at zero, as do
  // Adam's slots.
  EigenMlp(RowMatrix w1, RowMatrix w2, AdamOptions adam = {});

  // One Adam step on the batch x [rows, in], labels[i] in [0, out) for each
  // row; returns the batch's mean loss. labels.size() must be x.rows().
  float Step(const RowMatrix& x, std::span<const int32_t> labels);

 private:
  struct Slot {
    RowMatrix m, v;
  };
  void Update(RowMatrix& w, Slot& slot, const RowMatrix& grad, float lr_t);

  AdamOptions adam_;
  RowMatrix w1_, b1_, w2_, b2_;
  std::vector<Slot> slots_;  // w1, b1, w2, b2
  float beta_1_power_ = 1, beta_2_power_ = 1;
  // Every intermediate, kept between steps: a step allocates nothing once
  // the batch size repeats.
  RowMatrix pre_, h_, probs_, dh_, gw1_, gb1_, gw2_, gb2_;
  Eigen::VectorXf row_max_, sums_;
};

// Weights drawn as Keras's Dense draws its kernel (Glorot uniform).
RowMatrix GlorotUniform(int fan_in, int fan_out, std::mt19937& rng);

}  // namespace graphgc::bench

#endif  // GRAPHGC_BENCH_EIGEN_MLP_H_
