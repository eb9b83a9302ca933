// bench/models_bench: the seed program's fit, per sample.
//
//   ./bazelw run //bench:models_bench -- --benchmark_format=json
//
// BM_SeedFit/<live>: one epoch of the seed model (Input 10, Dense 64 relu,
// Dense 10 softmax, Adam, sparse cross-entropy) on 1,000 samples, batch 32,
// verbose 0, one thread, with <live> earlier seed models kept alive in the
// same graph. Targets (issue 4): at most 0.5 us/sample for /0; model 200 at
// most 1.03 x model 1 (the cost of a step must not grow with the graph).
// Only Fit is timed; building and compiling the model is not.
//
// BM_HandWrittenSeedEpoch: the same epoch by hand in plain Eigen;
// BM_SeedFitVsHandWritten: the two alternating, and their ratio (issue 17:
// the seed fit at most 2x the hand-written epoch);
// BM_HandWrittenSeedEpochOneModelUnflushed: that epoch as it ran before
// 62b7292, slowed by denormals (no target).
//
// BM_SeedFitModel200VsModel1 measures that ratio. Back-to-back runs of /0
// and /199 on a shared machine differ by up to 20% from load alone, so it
// alternates: each iteration fits a new model in a graph holding nothing
// else (model 1) and one in a graph holding 199 live seed models (model
// 200), and compares the total time of each, collections included.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "Eigen/Core"
#include "bench/eigen_mlp.h"
#include "benchmark/benchmark.h"
#include "models/sequential.h"
#include "tools/seed_workload.h"
#include "util/float_mode.h"

namespace graphgc {
namespace {

Sequential SeedModel(Graph& g) {
  absl::StatusOr<Sequential> model = seed::Model(g);
  if (!model.ok()) std::abort();
  return *std::move(model);
}

// Builds and compiles a new seed model in `g` (untimed) and fits it once on
// (x, y); the seconds the Fit took.
double TimedSeedFit(Graph& g, const Tensor& x, const Tensor& y) {
  Sequential model = SeedModel(g);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<History> h = model.Fit(x, y, {.verbose = 0});
  const auto end = std::chrono::steady_clock::now();
  if (!h.ok()) std::abort();
  return std::chrono::duration<double>(end - start).count();
}

void BM_SeedFit(benchmark::State& state) {
  Graph g;
  absl::StatusOr<std::pair<Tensor, Tensor>> data = seed::Data();
  if (!data.ok()) std::abort();
  auto [x, y] = *std::move(data);
  std::vector<Sequential> alive;
  for (int64_t i = 0; i < state.range(0); ++i) {
    alive.push_back(SeedModel(g));
    if (!alive.back().Fit(x, y, {.verbose = 0}).ok()) std::abort();
  }
  for (auto _ : state) {
    state.SetIterationTime(TimedSeedFit(g, x, y));
  }
  state.counters["us_per_sample"] = benchmark::Counter(
      1000e-6, benchmark::Counter::kIsIterationInvariantRate |
                   benchmark::Counter::kInvert);
  state.counters["graph_nodes"] = static_cast<double>(g.num_nodes());
  state.counters["collections"] = static_cast<double>(g.gc_stats().collections);
  state.counters["minor"] = static_cast<double>(g.gc_stats().minor_collections);
  state.counters["pause_ms"] = g.gc_stats().pause_ns_total / 1e6;
}
void BM_SeedFitModel200VsModel1(benchmark::State& state) {
  Graph first_graph;
  Graph busy_graph;
  absl::StatusOr<std::pair<Tensor, Tensor>> data = seed::Data();
  if (!data.ok()) std::abort();
  auto [x, y] = *std::move(data);
  std::vector<Sequential> alive;
  for (int i = 0; i < 199; ++i) {
    alive.push_back(SeedModel(busy_graph));
    if (!alive.back().Fit(x, y, {.verbose = 0}).ok()) std::abort();
  }
  double seconds[2] = {0, 0};
  Graph* graphs[2] = {&first_graph, &busy_graph};
  const int64_t pause_before[2] = {first_graph.gc_stats().pause_ns_total,
                                   busy_graph.gc_stats().pause_ns_total};
  for (auto _ : state) {
    for (int i = 0; i < 2; ++i) {
      seconds[i] += TimedSeedFit(*graphs[i], x, y);
    }
  }
  const double fits = static_cast<double>(state.iterations());
  state.counters["us_per_sample_model1"] = seconds[0] / fits / 1000 * 1e6;
  state.counters["us_per_sample_model200"] = seconds[1] / fits / 1000 * 1e6;
  state.counters["model200_over_model1"] = seconds[1] / seconds[0];
  for (int i = 0; i < 2; ++i) {
    state.counters[i == 0 ? "gc_us_per_fit_model1" : "gc_us_per_fit_model200"] =
        static_cast<double>(graphs[i]->gc_stats().pause_ns_total -
                            pause_before[i]) /
        fits / 1e3;
  }
  state.counters["graph_nodes_model200"] =
      static_cast<double>(busy_graph.num_nodes());
}
// The seed epoch written by hand with plain Eigen (bench/eigen_mlp.h): the
// seed data, Glorot-uniform weights, the samples shuffled and cut into
// batches of 32 (the last of 8), Adam. Not thread-safe.
class HandWrittenSeedEpochs {
 public:
  static constexpr int64_t kSamples = 1000, kBatch = 32, kIn = 10;

  HandWrittenSeedEpochs() : order_(kSamples), xb_(kBatch, kIn), yb_(kBatch) {
    absl::StatusOr<std::pair<Tensor, Tensor>> data = seed::Data(kSamples);
    if (!data.ok()) std::abort();
    data_ = *std::move(data);
    std::iota(order_.begin(), order_.end(), 0);
  }

  // New weights (Glorot uniform) and new Adam slots, as a new model has.
  void NewModel() {
    bench::RowMatrix w1 = bench::GlorotUniform(kIn, 64, rng_);
    bench::RowMatrix w2 = bench::GlorotUniform(64, 10, rng_);
    mlp_.emplace(w1, w2);
  }
  bool has_model() const { return mlp_.has_value(); }

  // One epoch of the current model; the seconds it took.
  double Epoch() {
    const absl::Span<const float> xs = data_.first.data<float>();
    const absl::Span<const int32_t> ys = data_.second.data<int32_t>();
    const auto start = std::chrono::steady_clock::now();
    std::shuffle(order_.begin(), order_.end(), rng_);
    float loss_sum = 0;
    for (int64_t b = 0; b < kSamples; b += kBatch) {
      const int64_t rows = std::min(kBatch, kSamples - b);
      xb_.resize(rows, kIn);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = order_[b + r];
        xb_.row(r) = Eigen::Map<const Eigen::RowVectorXf>(&xs[i * kIn], kIn);
        yb_[r] = ys[i];
      }
      loss_sum += mlp_->Step(xb_, std::span<const int32_t>(yb_.data(), rows)) *
                  static_cast<float>(rows);
    }
    benchmark::DoNotOptimize(loss_sum);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

 private:
  std::pair<Tensor, Tensor> data_;
  std::mt19937 rng_{0};
  std::vector<int64_t> order_;
  bench::RowMatrix xb_;
  std::vector<int32_t> yb_;
  std::optional<bench::EigenMlp> mlp_;
};

// `as_seed_fit`: each epoch from new weights (made untimed), as
// BM_SeedFit/0 fits a new model each iteration, with denormals flushed to
// zero as graphgc's kernels run (runtime/executor.h). Otherwise one model
// trains epoch after epoch, unflushed, and its steps slow as its gradients
// reach the denormal range.
void HandWrittenSeedEpoch(benchmark::State& state, bool as_seed_fit) {
  HandWrittenSeedEpochs epochs;
  std::optional<ScopedFlushDenormals> flush;
  if (as_seed_fit) flush.emplace();
  for (auto _ : state) {
    if (as_seed_fit || !epochs.has_model()) epochs.NewModel();
    state.SetIterationTime(epochs.Epoch());
  }
  state.counters["us_per_sample"] =
      benchmark::Counter(HandWrittenSeedEpochs::kSamples * 1e-6,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

// Issue 17: the seed fit at most 2x this (BM_SeedFitVsHandWritten).
void BM_HandWrittenSeedEpoch(benchmark::State& state) {
  HandWrittenSeedEpoch(state, /*as_seed_fit=*/true);
}
// One model trained on, unflushed, as this baseline ran before 62b7292: to
// show what the denormals cost it. No target.
void BM_HandWrittenSeedEpochOneModelUnflushed(benchmark::State& state) {
  HandWrittenSeedEpoch(state, /*as_seed_fit=*/false);
}
// Issue 17's ratio, measured side by side: each iteration fits a new seed
// model (as BM_SeedFit/0) and runs one hand-written epoch from new weights
// (as BM_HandWrittenSeedEpoch), in turn, first one then the other first,
// and compares the total time of each, so a slow stretch of a shared
// machine slows both sides alike. Taken from the two separate benchmarks,
// the ratio read 2.64 in one run of //bench:all and 1.91 in the next
// (session 28).
void BM_SeedFitVsHandWritten(benchmark::State& state) {
  Graph g;
  absl::StatusOr<std::pair<Tensor, Tensor>> data = seed::Data();
  if (!data.ok()) std::abort();
  auto [x, y] = *std::move(data);
  HandWrittenSeedEpochs hand;
  double fit_seconds = 0, hand_seconds = 0;
  bool fit_first = true;
  for (auto _ : state) {
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == fit_first) {
        fit_seconds += TimedSeedFit(g, x, y);
      } else {
        hand.NewModel();
        ScopedFlushDenormals flush;
        hand_seconds += hand.Epoch();
      }
    }
    fit_first = !fit_first;
  }
  const double epochs = static_cast<double>(state.iterations());
  constexpr double kSamples = HandWrittenSeedEpochs::kSamples;
  state.counters["us_per_sample_fit"] = fit_seconds / epochs / kSamples * 1e6;
  state.counters["us_per_sample_hand"] = hand_seconds / epochs / kSamples * 1e6;
  state.counters["fit_over_hand"] = fit_seconds / hand_seconds;
}

BENCHMARK(BM_HandWrittenSeedEpoch)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);
BENCHMARK(BM_HandWrittenSeedEpochOneModelUnflushed)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

BENCHMARK(BM_SeedFitVsHandWritten)->Unit(benchmark::kMillisecond)->MinTime(4.0);

BENCHMARK(BM_SeedFitModel200VsModel1)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(4.0);

BENCHMARK(BM_SeedFit)
    ->Arg(0)
    ->Arg(199)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

}  // namespace
}  // namespace graphgc

BENCHMARK_MAIN();
