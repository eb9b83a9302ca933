// bench/mlp_bench.cc
//
// One training step of a 10-64-10 MLP (ReLU hidden layer, sparse softmax
// cross-entropy, Adam) at batch 32: BM_GraphStep runs it as a graph (ops
// builders, AddGradients, Session::Run with the Adam updates as targets);
// BM_EigenStep is the same step written by hand with Eigen matrices
// (bench/eigen_mlp.h). The graph step should stay within 1.5x of the
// hand-written one (issue 17): BM_GraphStepVsEigenStep measures the two
// alternating. BM_GraphStepPlanBuild builds the step's plan, as the first
// run of a new model does.
#include <chrono>
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

// The step as a graph, built once; Step() runs it. Not thread-safe.
class GraphMlp {
 public:
  explicit GraphMlp(const Data& d) : d_(d) {
    auto var = [&](TensorShape shape, std::vector<float> init,
                   std::vector<Output>& inits) {
      Output v = ops::VarHandleOp(g_, DT_FLOAT, shape).value();
      Tensor t = Tensor::FromData<float>(shape, init).value();
      inits.push_back(
          ops::AssignVariableOp(v, ops::Const(g_, t).value()).value());
      return v;
    };
    std::vector<Output> inits;
    Output w1 = var({kIn, kHidden}, d.w1, inits);
    Output b1 = var({kHidden}, std::vector<float>(kHidden), inits);
    Output w2 = var({kHidden, kOut}, d.w2, inits);
    Output b2 = var({kOut}, std::vector<float>(kOut), inits);
    std::vector<Output> vars{w1, b1, w2, b2};

    x_ = ops::Placeholder(g_, DT_FLOAT, {-1, kIn}).value();
    y_ = ops::Placeholder(g_, DT_INT32, {-1}).value();
    std::vector<Output> reads;
    for (const Output& v : vars) {
      reads.push_back(ops::ReadVariableOp(v).value());
    }
    Output h =
        ops::Relu(
            ops::BiasAdd(ops::MatMul(x_, reads[0]).value(), reads[1]).value())
            .value();
    Output logits =
        ops::BiasAdd(ops::MatMul(h, reads[2]).value(), reads[3]).value();
    loss_ =
        ops::Mean(
            ops::SparseSoftmaxCrossEntropyWithLogits(logits, y_).value().loss)
            .value();
    std::vector<Output> grads = AddGradients(loss_, reads).value();

    // Adam; the beta powers are fed per step, as the step count changes.
    b1p_ = ops::Placeholder(g_, DT_FLOAT, {}).value();
    b2p_ = ops::Placeholder(g_, DT_FLOAT, {}).value();
    Output lr = ops::Const(g_, kLr).value();
    Output beta1 = ops::Const(g_, kBeta1).value();
    Output beta2 = ops::Const(g_, kBeta2).value();
    Output eps = ops::Const(g_, kEps).value();
    for (size_t i = 0; i < vars.size(); ++i) {
      std::vector<int64_t> dims(reads[i].shape().dim_sizes().begin(),
                                reads[i].shape().dim_sizes().end());
      std::vector<float> zeros(Tensor::Zeros(DT_FLOAT, dims)->num_elements());
      Output m = var(dims, zeros, inits);
      Output v = var(dims, zeros, inits);
      updates_.push_back(ops::ResourceApplyAdam(vars[i], m, v, b1p_, b2p_, lr,
                                                beta1, beta2, eps, grads[i])
                             .value());
    }
    session_.emplace(g_);
    init_ = session_->Run({}, {}, inits).status();
  }

  // Whether the variables were set up.
  const absl::Status& init_status() const { return init_; }
  const Graph& graph() const { return g_; }

  // Builds the step's plan anew (uncached); its number of steps.
  absl::StatusOr<int64_t> BuildPlan() {
    return session_->PlanSizeForTesting(Feeds(), {loss_}, updates_);
  }

  // One training step on the batch; its loss.
  absl::StatusOr<std::vector<Tensor>> Step() {
    p1_ *= kBeta1;
    p2_ *= kBeta2;
    return session_->Run(Feeds(), {loss_}, updates_);
  }

 private:
  std::vector<std::pair<Output, Tensor>> Feeds() const {
    return {{x_, d_.x},
            {y_, d_.y},
            {b1p_, Tensor::Scalar<float>(p1_)},
            {b2p_, Tensor::Scalar<float>(p2_)}};
  }

  const Data& d_;
  Graph g_;
  Output x_, y_, loss_, b1p_, b2p_;
  std::vector<Output> updates_;
  std::optional<Session> session_;
  absl::Status init_;
  float p1_ = 1.f, p2_ = 1.f;
};

void BM_GraphStep(benchmark::State& state) {
  const Data d = MakeData();
  GraphMlp mlp(d);
  if (!mlp.init_status().ok()) {
    state.SkipWithError(std::string(mlp.init_status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    auto out = mlp.Step();
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  state.counters["graph_nodes"] = static_cast<double>(mlp.graph().num_nodes());
}
BENCHMARK(BM_GraphStep);

// Building the step's plan, as Session::Run does the first time it runs a
// (feeds, fetches, targets) combination: once per new model (each Fit of a
// new seed model builds one plan of about this size).
void BM_GraphStepPlanBuild(benchmark::State& state) {
  const Data d = MakeData();
  GraphMlp mlp(d);
  if (!mlp.init_status().ok()) {
    state.SkipWithError(std::string(mlp.init_status().message()).c_str());
    return;
  }
  int64_t steps = 0;
  for (auto _ : state) {
    absl::StatusOr<int64_t> built = mlp.BuildPlan();
    if (!built.ok()) {
      state.SkipWithError(std::string(built.status().message()).c_str());
      break;
    }
    steps = *built;
  }
  state.counters["plan_steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_GraphStepPlanBuild);

// The hand-written step's model, on MakeData()'s weights.
bench::EigenMlp HandWrittenMlp(const Data& d) {
  return bench::EigenMlp(
      Eigen::Map<const bench::RowMatrix>(d.w1.data(), kIn, kHidden),
      Eigen::Map<const bench::RowMatrix>(d.w2.data(), kHidden, kOut),
      {.learning_rate = kLr,
       .beta_1 = kBeta1,
       .beta_2 = kBeta2,
       .epsilon = kEps});
}

// The hand-written step, with denormals flushed to zero or not.
void EigenStep(benchmark::State& state, bool flush_denormals) {
  const Data d = MakeData();
  const bench::RowMatrix x =
      Eigen::Map<const bench::RowMatrix>(d.x.data<float>().data(), kBatch, kIn);
  const absl::Span<const int32_t> labels = d.y.data<int32_t>();
  bench::EigenMlp mlp = HandWrittenMlp(d);
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

// Issue 17's ratio, measured side by side: each iteration runs a block of
// kStepsPerBlock graph steps and one of as many hand-written steps (flushed,
// as BM_EigenStep), in turn, first one then the other first, and compares
// the total time of each, so a slow stretch of a shared machine slows both
// sides alike. (BM_GraphStep alone varied 6.4-11.1 us between runs of one
// binary in session 28.)
void BM_GraphStepVsEigenStep(benchmark::State& state) {
  constexpr int kStepsPerBlock = 64;
  const Data d = MakeData();
  GraphMlp graph(d);
  if (!graph.init_status().ok()) {
    state.SkipWithError(std::string(graph.init_status().message()).c_str());
    return;
  }
  const bench::RowMatrix x =
      Eigen::Map<const bench::RowMatrix>(d.x.data<float>().data(), kBatch, kIn);
  const absl::Span<const int32_t> labels = d.y.data<int32_t>();
  bench::EigenMlp hand = HandWrittenMlp(d);
  double seconds[2] = {0, 0};  // graph, hand-written
  bool graph_first = true;
  for (auto _ : state) {
    for (int turn = 0; turn < 2; ++turn) {
      const bool run_graph = (turn == 0) == graph_first;
      std::optional<ScopedFlushDenormals> flush;
      if (!run_graph) flush.emplace();
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kStepsPerBlock; ++i) {
        if (run_graph) {
          auto out = graph.Step();
          if (!out.ok()) {
            state.SkipWithError(std::string(out.status().message()).c_str());
            return;
          }
          benchmark::DoNotOptimize(out);
        } else {
          const float loss = hand.Step(
              x, std::span<const int32_t>(labels.data(), labels.size()));
          benchmark::DoNotOptimize(loss);
          benchmark::ClobberMemory();
        }
      }
      seconds[run_graph ? 0 : 1] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        start)
              .count();
    }
    graph_first = !graph_first;
  }
  const double steps = static_cast<double>(state.iterations()) * kStepsPerBlock;
  state.counters["graph_ns_per_step"] = seconds[0] / steps * 1e9;
  state.counters["hand_ns_per_step"] = seconds[1] / steps * 1e9;
  state.counters["graph_over_hand"] = seconds[0] / seconds[1];
}
BENCHMARK(BM_GraphStepVsEigenStep)->MinTime(4.0);

}  // namespace
}  // namespace graphgc
