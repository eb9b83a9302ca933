// bench/mlp_bench.cc
//
// One training step of a 10-64-10 MLP (ReLU hidden layer, sparse softmax
// cross-entropy, Adam) at batch 32: BM_GraphStep runs it as a graph (ops
// builders, AddGradients, Session::Run with the Adam updates as targets);
// BM_EigenStep is the same step written by hand with Eigen matrices
// (bench/eigen_mlp.h). The graph step should stay within 1.5x of the
// hand-written one (issue 17).
#include <cmath>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "Eigen/Core"
#include "bench/eigen_mlp.h"
#include "benchmark/benchmark.h"
#include "ops/gradients.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "util/float_mode.h"

namespace graphgc {
namespace {

constexpr int kBatch = 32, kIn = 10, kHidden = 64, kOut = 10;
constexpr float kLr = 0.001f, kBeta1 = 0.9f, kBeta2 = 0.999f, kEps = 1e-7f;

std::vector<float> RandomValues(int64_t n, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

struct Data {
  Tensor x, y;
  std::vector<float> w1, w2;
};

Data MakeData() {
  std::mt19937 rng(301);
  Data d;
  d.x = Tensor::FromData<float>({kBatch, kIn},
                                RandomValues(kBatch * kIn, rng, 1.f))
            .value();
  std::uniform_int_distribution<int32_t> label(0, kOut - 1);
  std::vector<int32_t> ys(kBatch);
  for (int32_t& v : ys) v = label(rng);
  d.y = Tensor::FromData<int32_t>({kBatch}, ys).value();
  d.w1 = RandomValues(kIn * kHidden, rng, 0.3f);
  d.w2 = RandomValues(kHidden * kOut, rng, 0.3f);
  return d;
}

void BM_GraphStep(benchmark::State& state) {
  const Data d = MakeData();
  Graph g;
  auto var = [&](TensorShape shape, std::vector<float> init,
                 std::vector<Output>& inits) {
    Output v = ops::VarHandleOp(g, DT_FLOAT, shape).value();
    Tensor t = Tensor::FromData<float>(shape, init).value();
    inits.push_back(ops::AssignVariableOp(v, ops::Const(g, t).value()).value());
    return v;
  };
  std::vector<Output> inits;
  Output w1 = var({kIn, kHidden}, d.w1, inits);
  Output b1 = var({kHidden}, std::vector<float>(kHidden), inits);
  Output w2 = var({kHidden, kOut}, d.w2, inits);
  Output b2 = var({kOut}, std::vector<float>(kOut), inits);
  std::vector<Output> vars{w1, b1, w2, b2};

  Output x = ops::Placeholder(g, DT_FLOAT, {-1, kIn}).value();
  Output y = ops::Placeholder(g, DT_INT32, {-1}).value();
  std::vector<Output> reads;
  for (const Output& v : vars) reads.push_back(ops::ReadVariableOp(v).value());
  Output h =
      ops::Relu(
          ops::BiasAdd(ops::MatMul(x, reads[0]).value(), reads[1]).value())
          .value();
  Output logits =
      ops::BiasAdd(ops::MatMul(h, reads[2]).value(), reads[3]).value();
  Output loss =
      ops::Mean(
          ops::SparseSoftmaxCrossEntropyWithLogits(logits, y).value().loss)
          .value();
  std::vector<Output> grads = AddGradients(loss, reads).value();

  // Adam; the beta powers are fed per step, as the step count changes.
  Output b1p = ops::Placeholder(g, DT_FLOAT, {}).value();
  Output b2p = ops::Placeholder(g, DT_FLOAT, {}).value();
  Output lr = ops::Const(g, kLr).value();
  Output beta1 = ops::Const(g, kBeta1).value();
  Output beta2 = ops::Const(g, kBeta2).value();
  Output eps = ops::Const(g, kEps).value();
  std::vector<Output> updates;
  for (size_t i = 0; i < vars.size(); ++i) {
    std::vector<int64_t> dims(reads[i].shape().dim_sizes().begin(),
                              reads[i].shape().dim_sizes().end());
    std::vector<float> zeros(Tensor::Zeros(DT_FLOAT, dims)->num_elements());
    Output m = var(dims, zeros, inits);
    Output v = var(dims, zeros, inits);
    updates.push_back(ops::ResourceApplyAdam(vars[i], m, v, b1p, b2p, lr, beta1,
                                             beta2, eps, grads[i])
                          .value());
  }

  Session session(g);
  if (auto s = session.Run({}, {}, inits); !s.ok()) {
    state.SkipWithError(std::string(s.status().message()).c_str());
    return;
  }
  float p1 = 1.f, p2 = 1.f;
  for (auto _ : state) {
    p1 *= kBeta1;
    p2 *= kBeta2;
    auto out = session.Run({{x, d.x},
                            {y, d.y},
                            {b1p, Tensor::Scalar<float>(p1)},
                            {b2p, Tensor::Scalar<float>(p2)}},
                           {loss}, updates);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  state.counters["graph_nodes"] = static_cast<double>(g.num_nodes());
}
BENCHMARK(BM_GraphStep);

// The hand-written step, with denormals flushed to zero or not.
void EigenStep(benchmark::State& state, bool flush_denormals) {
  const Data d = MakeData();
  const bench::RowMatrix x =
      Eigen::Map<const bench::RowMatrix>(d.x.data<float>().data(), kBatch, kIn);
  const absl::Span<const int32_t> labels = d.y.data<int32_t>();
  bench::EigenMlp mlp(
      Eigen::Map<const bench::RowMatrix>(d.w1.data(), kIn, kHidden),
      Eigen::Map<const bench::RowMatrix>(d.w2.data(), kHidden, kOut),
      {.learning_rate = kLr,
       .beta_1 = kBeta1,
       .beta_2 = kBeta2,
       .epsilon = kEps});
  std::optional<ScopedFlushDenormals> flush;
  if (flush_denormals) flush.emplace();
  for (auto _ : state) {
    const float loss =
        mlp.Step(x, std::span<const int32_t>(labels.data(), labels.size()));
    benchmark::DoNotOptimize(loss);
    benchmark::ClobberMemory();
  }
}

// Denormals flushed to zero, as graphgc's kernels run (runtime/executor.h)
// and TensorFlow's: the step's cost does not depend on how far training
// has gone.
void BM_EigenStep(benchmark::State& state) { EigenStep(state, true); }
BENCHMARK(BM_EigenStep);

// The same step unflushed, to show why BM_EigenStep flushes: after enough
// steps on one batch its gradients reach the denormal range and each step
// takes x86's slow path. No target.
void BM_EigenStepUnflushed(benchmark::State& state) { EigenStep(state, false); }
BENCHMARK(BM_EigenStepUnflushed);

}  // namespace
}  // namespace graphgc
