// bench/macro_bench: the seed program at scale.
//
//   ./bazelw run -c opt //bench:macro_bench -- --benchmark_format=json
//       [--models=1000] [--tensorboard=true]
//
// BM_ConsecutiveSeedModels: --models consecutive seed models on
// Graph::Default() with the default GC policy, each built, compiled, fit for
// one epoch on the seed's 1,000 samples (verbose 0, with a TensorBoard
// callback into a temporary directory unless --tensorboard=false) and
// dropped. After model 10 and after the last, the model is dropped, the
// graph is collected and the live nodes and process RSS (VmRSS) are read.
// Targets (issue 6): rss_ratio = RSS after the last / after model 10
// <= 1.05; live_nodes_last == live_nodes_10. The whole loop is timed
// (seconds); so is the fit alone (us/sample, median of the first and the
// last 10 models).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "models/callbacks.h"
#include "models/sequential.h"
#include "tools/consecutive_models_lib.h"
#include "tools/seed_workload.h"

ABSL_FLAG(int, models, 1000, "consecutive seed models (at least 11)");
ABSL_FLAG(bool, tensorboard, true,
          "give each fit a TensorBoard callback, as the seed program does");

namespace graphgc {
namespace {

Sequential SeedModel() {
  absl::StatusOr<Sequential> model = seed::Model(Graph::Default());
  if (!model.ok()) std::abort();
  return *std::move(model);
}

void BM_ConsecutiveSeedModels(benchmark::State& state) {
  const int models = std::max(11, absl::GetFlag(FLAGS_models));
  const bool tensorboard = absl::GetFlag(FLAGS_tensorboard);
  Graph& g = Graph::Default();
  absl::StatusOr<std::pair<Tensor, Tensor>> data = seed::Data();
  if (!data.ok()) std::abort();
  auto [x, y] = *std::move(data);
  std::string logdir;
  if (tensorboard) {
    std::string templ =
        (std::filesystem::temp_directory_path() / "macro_bench.XXXXXX")
            .string();
    if (mkdtemp(templ.data()) == nullptr) {
      state.SkipWithError("cannot make a temporary directory");
      return;
    }
    logdir = templ;
  }
  int64_t rss_10 = 0, rss_last = 0, live_10 = 0, live_last = 0;
  std::vector<double> fit_us;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < models; ++i) {
      {
        Sequential model = SeedModel();
        FitOptions fit{.verbose = 0};
        if (tensorboard) {
          fit.callbacks = {callbacks::TensorBoard::Create(
              {.log_dir = absl::StrCat(logdir, "/", i), .update_freq = 600})};
        }
        const auto fit_start = std::chrono::steady_clock::now();
        if (!model.Fit(x, y, fit).ok()) {
          state.SkipWithError("fit failed");
          return;
        }
        fit_us.push_back(std::chrono::duration<double, std::micro>(
                             std::chrono::steady_clock::now() - fit_start)
                             .count() /
                         1000);
      }
      if (i == 9 || i == models - 1) {
        g.Collect();
        const int64_t live = g.num_nodes();
        const int64_t rss = consecutive::ProcessRssKb();
        (i == 9 ? live_10 : live_last) = live;
        (i == 9 ? rss_10 : rss_last) = rss;
      }
    }
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  if (!logdir.empty()) std::filesystem::remove_all(logdir);
  const std::vector<double> head(fit_us.begin(), fit_us.begin() + 10);
  const std::vector<double> tail(fit_us.end() - 10, fit_us.end());
  const GcStats gc = g.gc_stats();
  state.counters["models"] = models;
  state.counters["rss_kb_10"] = static_cast<double>(rss_10);
  state.counters["rss_kb_last"] = static_cast<double>(rss_last);
  state.counters["rss_ratio"] = consecutive::Ratio(rss_last, rss_10);
  state.counters["live_nodes_10"] = static_cast<double>(live_10);
  state.counters["live_nodes_last"] = static_cast<double>(live_last);
  state.counters["live_nodes_equal"] = live_10 == live_last ? 1 : 0;
  state.counters["us_per_sample_first10"] = consecutive::Median(head);
  state.counters["us_per_sample_last10"] = consecutive::Median(tail);
  state.counters["collections"] = static_cast<double>(gc.collections);
  state.counters["pause_ms_total"] = gc.pause_ns_total / 1e6;
  state.counters["peak_nodes"] = static_cast<double>(gc.peak_nodes);
}
BENCHMARK(BM_ConsecutiveSeedModels)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

}  // namespace
}  // namespace graphgc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // takes the --benchmark_* flags
  absl::ParseCommandLine(argc, argv);  // then ours
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
