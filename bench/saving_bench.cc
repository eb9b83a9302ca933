// bench/saving_bench: saving and loading models, and the self-play loop.
//
//   ./bazelw run -c opt //bench:saving_bench -- --benchmark_format=json
//       [--loads=1000]
//
// BM_LoadAndDropRepeatedly: the seed model (Input(10), Dense(64, relu),
// Dense(10, softmax), Adam), trained one epoch and saved once, then loaded
// --loads times on Graph::Default(), each load dropping the previous model
// (the self-play pattern: reload the newest model again and again). After
// load 10 and after the last, the model is dropped, the graph is collected
// and the live nodes and process RSS (VmRSS) are read. Targets (issue 18):
// rss_ratio = RSS after the last / after load 10 <= 1.05; live_nodes_last
// == live_nodes_10. ms_per_load: the median load (config, HDF5 weights,
// build, compile).
//
// BM_Save / BM_Load: one Save (four files, staged then renamed) and one
// LoadModel of the seed model, timed alone.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "benchmark/benchmark.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "tools/consecutive_models_lib.h"
#include "tools/seed_workload.h"

ABSL_FLAG(int, loads, 1000, "loads of BM_LoadAndDropRepeatedly (at least 11)");

namespace graphgc {
namespace {

// A new temporary directory, or "" (the benchmark then skips).
std::string TempDir() {
  std::string templ =
      (std::filesystem::temp_directory_path() / "saving_bench.XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) return "";
  return templ;
}

// The seed model, trained one epoch and saved in `dir`/model.
bool SaveSeedModel(const std::string& dir) {
  absl::StatusOr<std::pair<Tensor, Tensor>> data = seed::Data();
  if (!data.ok()) return false;
  absl::StatusOr<Sequential> model = seed::Model(Graph::Default());
  if (!model.ok() ||
      !model->Fit(data->first, data->second, {.verbose = 0}).ok()) {
    return false;
  }
  return model->Save(dir + "/model").ok();
}

void BM_LoadAndDropRepeatedly(benchmark::State& state) {
  const int loads = std::max(11, absl::GetFlag(FLAGS_loads));
  Graph& g = Graph::Default();
  const std::string dir = TempDir();
  if (dir.empty() || !SaveSeedModel(dir)) {
    state.SkipWithError("cannot save the seed model");
    return;
  }
  int64_t rss_10 = 0, rss_last = 0, live_10 = 0, live_last = 0;
  std::vector<double> load_ms;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::optional<Sequential> model;
    for (int i = 0; i < loads; ++i) {
      const auto load_start = std::chrono::steady_clock::now();
      absl::StatusOr<Sequential> loaded = LoadModel(dir + "/model");
      if (!loaded.ok()) {
        state.SkipWithError("load failed");
        return;
      }
      model = *std::move(loaded);  // drops the previous one
      load_ms.push_back(std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - load_start)
                            .count());
      if (i == 9 || i == loads - 1) {
        model.reset();
        g.Collect();
        (i == 9 ? live_10 : live_last) = g.num_nodes();
        (i == 9 ? rss_10 : rss_last) = consecutive::ProcessRssKb();
      }
    }
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::filesystem::remove_all(dir);
  state.counters["loads"] = loads;
  state.counters["rss_kb_10"] = static_cast<double>(rss_10);
  state.counters["rss_kb_last"] = static_cast<double>(rss_last);
  state.counters["rss_ratio"] = consecutive::Ratio(rss_last, rss_10);
  state.counters["live_nodes_10"] = static_cast<double>(live_10);
  state.counters["live_nodes_last"] = static_cast<double>(live_last);
  state.counters["live_nodes_equal"] = live_10 == live_last ? 1 : 0;
  state.counters["ms_per_load"] = consecutive::Median(load_ms);
}
BENCHMARK(BM_LoadAndDropRepeatedly)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

void BM_Save(benchmark::State& state) {
  const std::string dir = TempDir();
  absl::StatusOr<Sequential> model = seed::Model(Graph::Default());
  if (dir.empty() || !model.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  for (auto _ : state) {
    if (!model->Save(dir + "/model").ok()) {
      state.SkipWithError("save failed");
      break;
    }
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Save)->Unit(benchmark::kMillisecond);

void BM_Load(benchmark::State& state) {
  const std::string dir = TempDir();
  if (dir.empty() || !SaveSeedModel(dir)) {
    state.SkipWithError("cannot save the seed model");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<Sequential> model = LoadModel(dir + "/model");
    if (!model.ok()) {
      state.SkipWithError("load failed");
      break;
    }
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace graphgc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // takes the --benchmark_* flags
  absl::ParseCommandLine(argc, argv);  // then ours
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
