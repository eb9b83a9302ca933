// tools/grid_search: k-fold hyperparameter search on a CSV dataset.
//
//   ./bazelw run -c opt //tools:grid_search -- --units=64,256 --dropout=0,0.2
//   mpirun -np 2 bazel-bin/tools/grid_search_mpi --units=64,256 ...
//
// Every trial (a configuration on one fold) is a fresh Sequential on the
// default graph, fit with EarlyStopping on val_loss; a progress line per
// trial goes to stderr, then rank 0 prints the table of configurations
// (mean ± std validation accuracy over folds, epochs, time), the best
// configuration, and each process's live graph nodes, RSS and collector
// totals. See tools/grid_search_lib.h.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "data/csv.h"
#include "runtime/graph.h"
#include "tools/cluster.h"
#include "tools/grid_search_lib.h"
#include "util/file.h"

ABSL_FLAG(std::string, data,
          "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz",
          "CSV (plain or .gz) of numeric features, label in the last column");
ABSL_FLAG(bool, header, false, "the CSV's first line names the columns");
ABSL_FLAG(int, folds, 5, "stratified folds");
ABSL_FLAG(uint64_t, seed, 1, "seed of the folds and of every trial");
ABSL_FLAG(int, epochs, 100, "most epochs per trial (EarlyStopping ends most)");
ABSL_FLAG(int, patience, 5, "EarlyStopping patience on val_loss");
ABSL_FLAG(std::string, grid, "",
          "grid file: lines 'key = v1, v2' (keys as the flags below); the "
          "flags below override its lines");
ABSL_FLAG(std::string, architecture, "", "dense and/or conv, e.g. dense,conv");
ABSL_FLAG(std::string, units, "", "hidden units (dense) / filters (conv)");
ABSL_FLAG(std::string, dropout, "", "dropout rates, e.g. 0,0.2");
ABSL_FLAG(std::string, learning_rate, "", "Adam learning rates");
ABSL_FLAG(std::string, batch_size, "", "batch sizes");
ABSL_FLAG(std::string, image_shape, "",
          "height,width,channels for conv (8,8,1 for the digits)");
ABSL_FLAG(double, scale, 0,
          "features are divided by it; 0: by the largest |value| (16 for "
          "the digits)");
ABSL_FLAG(std::string, logdir, "",
          "TensorBoard log directory: <logdir>/<trial>/train|validation and "
          "the HParams summaries; empty: none");
ABSL_FLAG(std::string, save_best, "",
          "retrain the best configuration on all rows and Save() it here");
ABSL_FLAG(std::string, mpi, "auto",
          "auto: MPI when started by mpirun (grid_search_mpi only); on; off");
ABSL_FLAG(bool, trials, false, "also print every trial's result");
ABSL_FLAG(std::string, write_folds, "",
          "write each row's fold (one per line) to this file");
ABSL_FLAG(int, fail_trial, -1, "testing: make this trial fail");
ABSL_FLAG(int32_t, max_classes, 10000,
          "labels must be below this (the output layer has max label + 1 "
          "units) and dense: at least half of 0..max label occur");
ABSL_FLAG(int64_t, max_trials, 100000,
          "refuse a grid of more trials (configurations x folds)");
ABSL_FLAG(double, rank_timeout, 600,
          "MPI: rank 0 aborts the job when a rank has been silent this many "
          "seconds while it waits for its results (each rank reports after "
          "every trial, so make it longer than the longest trial)");

namespace {

namespace grid = graphgc::grid;

int Fail(const std::string& message) {
  std::fprintf(stderr, "grid_search: %s\n", message.c_str());
  return 1;
}

absl::StatusOr<grid::GridSpec> Spec() {
  grid::GridSpec spec;
  const std::string file = absl::GetFlag(FLAGS_grid);
  if (!file.empty()) {
    absl::StatusOr<std::string> text =
        graphgc::ReadRegularFile(file, int64_t{1} << 20);
    if (!text.ok()) return text.status();
    absl::StatusOr<grid::GridSpec> parsed = grid::ParseGridText(*text, file);
    if (!parsed.ok()) return parsed.status();
    spec = *parsed;
  }
  const std::pair<const char*, std::string> flags[] = {
      {"architecture", absl::GetFlag(FLAGS_architecture)},
      {"units", absl::GetFlag(FLAGS_units)},
      {"dropout", absl::GetFlag(FLAGS_dropout)},
      {"learning_rate", absl::GetFlag(FLAGS_learning_rate)},
      {"batch_size", absl::GetFlag(FLAGS_batch_size)}};
  for (const auto& [key, value] : flags) {
    if (value.empty()) continue;
    absl::Status s = spec.Set(key, value);
    if (!s.ok())
      return absl::InvalidArgumentError(absl::StrCat("--", s.message()));
  }
  return spec;
}

absl::StatusOr<std::vector<int64_t>> ImageShape() {
  std::vector<int64_t> shape;
  const std::string text = absl::GetFlag(FLAGS_image_shape);
  if (text.empty()) return shape;
  for (absl::string_view d : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(d, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--image_shape: '", d, "' is not an integer"));
    }
    shape.push_back(v);
  }
  return shape;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "k-fold hyperparameter search: every trial a fresh model on one "
      "graph.\n"
      "  grid_search [--data=digits.csv.gz] [--folds=5] "
      "[--architecture=dense,conv --image_shape=8,8,1] [--units=64,256] "
      "[--dropout=0,0.2] [--learning_rate=0.001,0.003] [--batch_size=32] "
      "[--grid=FILE] [--logdir=DIR] [--save_best=DIR] [--trials]\n"
      "  mpirun -np K grid_search_mpi ... spreads the trials over K ranks.");
  absl::ParseCommandLine(argc, argv);

  absl::StatusOr<std::unique_ptr<grid::Cluster>> started =
      grid::StartCluster(absl::GetFlag(FLAGS_mpi), &argc, &argv);
  if (!started.ok()) return Fail(started.status().ToString());
  grid::Cluster& cluster = **started;
  const int rank = cluster.rank(), size = cluster.size();
  auto fail_all = [&](const std::string& message) -> int {
    const std::string who = size > 1 ? absl::StrCat("rank ", rank, ": ") : "";
    Fail(who + message);
    if (size > 1) cluster.Abort(1);
    return 1;
  };

  const double rank_timeout = absl::GetFlag(FLAGS_rank_timeout);
  if (!(rank_timeout > 0) || !std::isfinite(rank_timeout)) {
    return fail_all(
        absl::StrCat("--rank_timeout must be > 0 seconds, got ", rank_timeout));
  }
  cluster.set_silence_limit(rank_timeout);

  absl::StatusOr<grid::GridSpec> spec = Spec();
  if (!spec.ok()) return fail_all(spec.status().ToString());
  // The grid's size and every output path are checked before the data is
  // read and any trial runs.
  absl::StatusOr<int64_t> counted = grid::CountTrials(
      *spec, absl::GetFlag(FLAGS_folds), absl::GetFlag(FLAGS_max_trials));
  if (!counted.ok()) return fail_all(counted.status().ToString());
  const std::pair<std::string, std::pair<const char*, grid::OutputKind>>
      outputs[] = {{absl::GetFlag(FLAGS_logdir),
                    {"--logdir", grid::OutputKind::kDirectory}},
                   {absl::GetFlag(FLAGS_save_best),
                    {"--save_best", grid::OutputKind::kDirectory}},
                   {absl::GetFlag(FLAGS_write_folds),
                    {"--write_folds", grid::OutputKind::kFile}}};
  for (const auto& [out_path, what] : outputs) {
    if (out_path.empty()) continue;
    absl::Status s = grid::CheckOutputPath(out_path, what.first, what.second);
    if (!s.ok()) return fail_all(s.ToString());
  }
  absl::StatusOr<std::vector<int64_t>> image_shape = ImageShape();
  if (!image_shape.ok()) return fail_all(image_shape.status().ToString());
  const std::string path = absl::GetFlag(FLAGS_data);
  absl::StatusOr<graphgc::data::CsvDataset> data =
      graphgc::data::ReadCsv(path, {.header = absl::GetFlag(FLAGS_header)});
  if (!data.ok()) return fail_all(data.status().ToString());
  grid::SearchOptions options;
  options.folds = absl::GetFlag(FLAGS_folds);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.max_epochs = absl::GetFlag(FLAGS_epochs);
  options.patience = absl::GetFlag(FLAGS_patience);
  options.image_shape = *image_shape;
  options.scale = absl::GetFlag(FLAGS_scale);
  options.logdir = absl::GetFlag(FLAGS_logdir);
  options.fail_trial = absl::GetFlag(FLAGS_fail_trial);
  options.max_classes = absl::GetFlag(FLAGS_max_classes);
  options.max_trials = absl::GetFlag(FLAGS_max_trials);
  const int64_t rows = data->rows, features = data->features;
  const int classes = data->num_classes;
  absl::StatusOr<grid::GridSearch> search =
      grid::GridSearch::Create(*std::move(data), grid::Expand(*spec), options);
  if (!search.ok()) return fail_all(search.status().ToString());

  // Create() bounds it by max_trials, at most INT32_MAX.
  const int total = static_cast<int>(search->num_trials());
  if (rank == 0) {
    std::printf(
        "grid_search: %s: %lld rows, %lld features, %d classes (features / "
        "%g); %zu configurations x %d folds = %d trials on %d process%s\n",
        path.c_str(), static_cast<long long>(rows),
        static_cast<long long>(features), classes, search->scale(),
        search->configs().size(), options.folds, total, size,
        size > 1 ? "es (MPI)" : "");
    std::fflush(stdout);
    const std::string folds_out = absl::GetFlag(FLAGS_write_folds);
    if (!folds_out.empty()) {
      std::ofstream out(folds_out);
      for (int f : search->folds()) out << f << "\n";
      if (!out) return fail_all(absl::StrCat("cannot write ", folds_out));
    }
  }

  const auto start = std::chrono::steady_clock::now();
  std::vector<grid::TrialResult> mine;
  const int my_total = (total - rank + size - 1) / size;
  for (int i = rank; i < total; i += size) {
    absl::StatusOr<grid::TrialResult> r = search->RunTrial(i);
    if (!r.ok()) return fail_all(r.status().ToString());
    r->rank = rank;
    mine.push_back(*r);
    cluster.Heartbeat();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::fprintf(
        stderr, "%s%s\n",
        size > 1 ? absl::StrCat("[rank ", rank, "] ").c_str() : "",
        grid::FormatProgress(*search, *r, static_cast<int>(mine.size()),
                             my_total, elapsed)
            .c_str());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const grid::ProcessStats my_stats =
      grid::StatsOf(rank, mine, graphgc::Graph::Default(), seconds);
  std::vector<grid::TrialResult> results;
  std::vector<grid::ProcessStats> stats;
  absl::Status gathered = cluster.Gather(mine, my_stats, &results, &stats);
  if (!gathered.ok()) return fail_all(gathered.ToString());

  if (rank == 0) {
    if (static_cast<int>(results.size()) != total) {
      return fail_all(absl::StrCat("gathered ", results.size(), " results of ",
                                   total, " trials"));
    }
    const std::vector<grid::ConfigSummary> summaries = grid::SummarizeConfigs(
        static_cast<int>(search->configs().size()), results);
    std::cout << "\n"
              << grid::FormatTable(*search, summaries) << "\n"
              << grid::FormatBest(*search, summaries);
    if (absl::GetFlag(FLAGS_trials)) {
      std::cout << "\n" << grid::FormatTrials(*search, results);
    }
    std::cout << "\n";
    for (const grid::ProcessStats& s : stats) {
      std::cout << grid::FormatProcessStats(s);
    }
    // The trials of every rank, gathered: the search's wall time.
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::printf("Wall time: %.1f s on %d process%s\n", wall, size,
                size > 1 ? "es" : "");
    std::fflush(stdout);
    absl::Status s = search->WriteExperiment();
    if (!s.ok()) return fail_all(s.ToString());
    if (!options.logdir.empty()) {
      std::printf("TensorBoard: tensorboard --logdir %s (HParams tab)\n",
                  options.logdir.c_str());
    }
    const std::string save = absl::GetFlag(FLAGS_save_best);
    const int best = grid::BestConfig(summaries);
    if (!save.empty() && best >= 0) {
      const int epochs =
          static_cast<int>(summaries[best].mean_best_epochs + 0.5);
      s = search->TrainAndSave(search->configs()[best], epochs, save);
      if (!s.ok()) return fail_all(s.ToString());
      std::printf(
          "Saved c%02d trained %d epochs on all %lld rows to %s (it takes "
          "x / %g)\n",
          best, epochs, static_cast<long long>(rows), save.c_str(),
          search->scale());
    }
  }
  absl::Status finished = cluster.Finish();
  if (!finished.ok()) return Fail(finished.ToString());
  return 0;
}
