// bench/models_bench: the seed program's fit, per sample.
//
//   ./bazelw run //bench:models_bench -- --benchmark_format=json
//
// BM_SeedFit/<live>: one epoch of the seed model (Input 10, Dense 64 relu,
// Dense 10 softmax, Adam, sparse cross-entropy) on 1,000 samples, batch 32,
// verbose 0, one thread, with <live> earlier seed models kept alive in the
// same graph. Targets (issue 4): at most 0.5 us/sample for /0; /199 at most
// 1.03 x /0 (the cost of a step must not grow with the graph). Only Fit is
// timed; building and compiling the model is not.
#include <chrono>
#include <cstdlib>
#include <vector>

#include "benchmark/benchmark.h"
#include "models/sequential.h"
#include "tools/seed_workload.h"

namespace graphgc {
namespace {

Sequential SeedModel(Graph& g) {
  absl::StatusOr<Sequential> model = seed::Model(g);
  if (!model.ok()) std::abort();
  return *std::move(model);
}

void BM_SeedFit(benchmark::State& state) {
  Graph g;
  auto [x, y] = seed::Data();
  std::vector<Sequential> alive;
  for (int64_t i = 0; i < state.range(0); ++i) {
    alive.push_back(SeedModel(g));
    if (!alive.back().Fit(x, y, {.verbose = 0}).ok()) std::abort();
  }
  for (auto _ : state) {
    Sequential model = SeedModel(g);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<History> h = model.Fit(x, y, {.verbose = 0});
    const auto end = std::chrono::steady_clock::now();
    if (!h.ok()) std::abort();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
  }
  state.counters["us_per_sample"] = benchmark::Counter(
      1000e-6, benchmark::Counter::kIsIterationInvariantRate |
                   benchmark::Counter::kInvert);
  state.counters["graph_nodes"] = static_cast<double>(g.num_nodes());
  state.counters["collections"] = static_cast<double>(g.gc_stats().collections);
  state.counters["pause_ms"] = g.gc_stats().pause_ns_total / 1e6;
}
BENCHMARK(BM_SeedFit)
    ->Arg(0)
    ->Arg(199)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

}  // namespace
}  // namespace graphgc

BENCHMARK_MAIN();
