// tools/grid_search_lib.h
//
// The logic of `grid_search`: a k-fold hyperparameter search over a grid of
// model variants on a labelled CSV dataset (data/csv.h), every trial a fresh
// Sequential on one graph (Graph::Default() unless told otherwise), trained
// with EarlyStopping on the validation loss. Kept apart from main() so tests
// can run it on a small scale.
//
// A trial is one configuration (architecture, units, dropout, learning rate,
// batch size) on one fold: trained on the other folds, validated on it. Trial
// i is configuration i / folds on fold i % folds. Everything a trial draws
// (kernel initialisers, dropout masks, shuffling) is seeded from the search
// seed and the trial's index, and folds are drawn from the seed alone, so a
// trial gives the same result bit for bit whichever process runs it and in
// whichever order (the MPI runner relies on it).
//
// Features are divided by one scale (by default the largest absolute value
// in the dataset, 16 for the digits), so a saved model takes x / scale.
//
// With a log directory, trial i writes <logdir>/<trial name>: the
// TensorBoard callback's train/ and validation/ runs, and the HParams
// session start and end (serialize/hparams_summary.h) with a scalar
// "fold_accuracy" (the validation accuracy of the restored best weights);
// WriteExperiment() writes the experiment summary to <logdir>.
//
// Thread safety: a GridSearch is immutable after Create(); RunTrial() may
// be called from one thread at a time per graph (it trains on the graph).
//
// Example:
//   GG_ASSIGN_OR_RETURN(GridSpec spec, ParseGridText("units = 64, 128", "-"));
//   GG_ASSIGN_OR_RETURN(std::vector<Config> configs, Expand(spec));
//   GG_ASSIGN_OR_RETURN(GridSearch search,
//                       GridSearch::Create(std::move(data), configs, {}));
//   GG_ASSIGN_OR_RETURN(TrialResult r, search.RunTrial(0));
#ifndef GRAPHGC_TOOLS_GRID_SEARCH_LIB_H_
#define GRAPHGC_TOOLS_GRID_SEARCH_LIB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data/csv.h"
#include "gc/stats.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc::grid {

// One model variant.
struct Config {
  std::string architecture = "dense";  // "dense" or "conv"
  int64_t units = 64;  // dense: hidden units; conv: Conv2D filters
  double dropout = 0;  // Dropout rate before the output layer; 0: none
  double learning_rate = 0.001;  // Adam's
  int batch_size = 32;
};

// The values of each hyperparameter; the grid is their product.
struct GridSpec {
  std::vector<std::string> architectures = {"dense"};
  std::vector<int64_t> units = {64};
  std::vector<double> dropouts = {0};
  std::vector<double> learning_rates = {0.001};
  std::vector<int> batch_sizes = {32};

  // Sets one hyperparameter from a comma-separated list. Keys:
  // architecture, units, dropout, learning_rate, batch_size. InvalidArgument
  // naming the key and value for an unknown key, an empty list, a value
  // that does not parse or is out of range (architecture dense|conv, units
  // in [1, 65536], dropout in [0, 1), learning rate finite and > 0, batch
  // size in [1, 65536]).
  absl::Status Set(absl::string_view key, absl::string_view values);
};

// ParseGridText: a grid file, one "key = v1, v2, ..." per line ('#' starts
// a comment; blank lines skipped), keys as GridSpec::Set; a key not given
// keeps its default. Errors name `source` and the line.
absl::StatusOr<GridSpec> ParseGridText(absl::string_view text,
                                       absl::string_view source);

// Expand: every combination, architecture slowest, batch size fastest.
// Check CountTrials() first: Expand allocates one Config per combination.
std::vector<Config> Expand(const GridSpec& spec);

// CountTrials: configurations (the product of the list sizes) times
// `folds`, counted in int64 with overflow checks, without expanding the
// grid. InvalidArgument, saying the count, when it is over `max_trials`
// (or overflows) or folds < 1.
absl::StatusOr<int64_t> CountTrials(const GridSpec& spec, int folds,
                                    int64_t max_trials);

// CheckLabels: OK if the labels can mean classes of an output layer of
// max(label) + 1 units: every label below `max_classes`, and the labels
// dense enough: of the ids 0..max(label), at least half occur, unless
// max(label) < 16 (a small layer costs nothing). InvalidArgument naming the
// 1-based data row (header and blank lines not counted) of the first label
// over the limit, or of the largest label when too sparse.
absl::Status CheckLabels(const std::vector<int32_t>& labels,
                         int32_t max_classes);

// What an output path must be: a directory grid_search creates or writes
// into, or a file it writes.
enum class OutputKind { kDirectory, kFile };

// CheckOutputPath: OK if `path` can be written as `kind` before any work
// is done: CheckPath, then if it exists it is of that kind (a directory,
// or not a directory) and writable; if not, its nearest existing ancestor
// is a writable directory (so it can be created). FailedPrecondition
// naming `what` (the flag) and the path otherwise.
absl::Status CheckOutputPath(const std::string& path, absl::string_view what,
                             OutputKind kind);

// "dense u64 d0.2 lr0.001 b32".
std::string ConfigLabel(const Config& config);

// StratifiedFolds: a fold in [0, folds) for each label, every class spread
// evenly over the folds (its samples shuffled with `seed`, then dealt in
// turn, continuing where the previous class stopped so fold sizes differ by
// at most one). InvalidArgument if folds < 2 or there are fewer labels than
// folds.
absl::StatusOr<std::vector<int>> StratifiedFolds(
    const std::vector<int32_t>& labels, int folds, uint64_t seed);

struct SearchOptions {
  int folds = 5;
  uint64_t seed = 1;
  int max_epochs = 100;
  int patience = 5;  // EarlyStopping's, on val_loss
  // Rows reshaped to this (e.g. {8, 8, 1}) for conv; its product must be
  // the feature count. Empty: conv configurations are refused.
  std::vector<int64_t> image_shape;
  // Features are divided by it; 0: by the largest absolute feature value.
  double scale = 0;
  std::string logdir;      // empty: no TensorBoard files
  Graph* graph = nullptr;  // nullptr: Graph::Default()
  // For tests of failure handling: RunTrial(fail_trial) returns Internal.
  int fail_trial = -1;
  // The output layer has max(label) + 1 units: labels at or over this
  // are refused, and so are sparse labels (CheckLabels).
  int32_t max_classes = 10000;
  // Grids of more trials (configurations x folds) are refused.
  int64_t max_trials = 100000;
};

// What one trial measured. Trivially copyable (the MPI runner sends it as
// bytes).
struct TrialResult {
  int32_t index = 0;
  int32_t config = 0;
  int32_t fold = 0;
  int32_t epochs = 0;      // epochs run (early stopping included)
  int32_t best_epoch = 0;  // 0-based epoch of the best val_loss
  int32_t rank = 0;        // the process that ran it
  float val_accuracy = 0;  // Evaluate on the fold, best weights restored
  float val_loss = 0;
  double seconds = 0;      // the whole trial: build, fit, evaluate
  int64_t live_nodes = 0;  // graph.num_nodes() right after the fit
  int64_t rss_kb = 0;      // VmRSS after the trial
};

// The search: dataset, folds and configurations.
class GridSearch {
 public:
  // Validates everything before any trial: options (folds >= 2, epochs and
  // patience >= 1 and >= 0, image_shape against the features, the logdir
  // writable), every configuration (conv needs image_shape), the number of
  // trials (at most max_trials), the dataset (at least `folds` rows, at
  // least 2 classes, labels as CheckLabels). InvalidArgument naming what is
  // wrong.
  static absl::StatusOr<GridSearch> Create(data::CsvDataset data,
                                           std::vector<Config> configs,
                                           SearchOptions options);

  // At most options().max_trials, so an int trial index never overflows.
  int64_t num_trials() const;
  const std::vector<Config>& configs() const { return configs_; }
  const std::vector<int>& folds() const { return folds_; }
  const SearchOptions& options() const { return options_; }
  double scale() const { return scale_; }
  const data::CsvDataset& data() const { return data_; }
  // "c03_f2": configuration and fold of trial `index`.
  std::string TrialName(int index) const;

  // Runs trial `index`: builds, fits and evaluates a fresh model, drops it.
  // Errors name the trial.
  absl::StatusOr<TrialResult> RunTrial(int index) const;

  // The model of `config` (unfitted, compiled) for rows shaped like the
  // data, seeded by `seed`.
  absl::StatusOr<Sequential> BuildModel(const Config& config,
                                        uint64_t seed) const;

  // Trains `config` on every row for `epochs` epochs and saves it to `dir`
  // (Sequential::Save).
  absl::Status TrainAndSave(const Config& config, int epochs,
                            const std::string& dir) const;

  // The HParams experiment summary in options().logdir (no-op without one).
  absl::Status WriteExperiment() const;

 private:
  GridSearch() = default;
  // x (scaled, shaped for `config`) and y of the rows where `pick` holds.
  absl::StatusOr<std::pair<Tensor, Tensor>> Rows(
      const Config& config, const std::vector<bool>& pick) const;
  Graph& graph() const;

  data::CsvDataset data_;
  std::vector<Config> configs_;
  SearchOptions options_;
  std::vector<int> folds_;
  double scale_ = 1;
};

// One configuration over its folds.
struct ConfigSummary {
  int config = 0;
  int folds = 0;  // results seen
  double mean_accuracy = 0;
  double std_accuracy = 0;  // population standard deviation over folds
  double mean_epochs = 0;
  double mean_best_epochs = 0;  // mean of best_epoch + 1
  double seconds = 0;           // sum over folds
};

// Summaries of every configuration, in configuration order, from `results`
// (any order).
std::vector<ConfigSummary> SummarizeConfigs(
    int num_configs, const std::vector<TrialResult>& results);

// The configuration with the highest mean accuracy (ties: the lowest
// index); -1 if none has results.
int BestConfig(const std::vector<ConfigSummary>& summaries);

// What one process saw: its trials' live nodes and RSS, and its collector.
// Trivially copyable.
struct ProcessStats {
  int32_t rank = 0;
  int32_t trials = 0;
  int64_t live_nodes_first = 0;
  int64_t live_nodes_max = 0;
  int64_t live_nodes_last = 0;
  int64_t rss_first_kb = 0;
  int64_t rss_last_kb = 0;
  double seconds = 0;
  GcStats gc;
};

// The stats of the trials `results` (in the order run) on `graph`.
ProcessStats StatsOf(int rank, const std::vector<TrialResult>& results,
                     const Graph& graph, double seconds);

// Progress line: "trial 7/40 c01_f2 dense u64 d0 lr0.001 b32: val_acc ...,
// ETA 1m05s".
std::string FormatProgress(const GridSearch& search, const TrialResult& r,
                           int done, int total, double elapsed_seconds);
// One line per trial, in index order: name, accuracy and loss (%.6f), epochs.
std::string FormatTrials(const GridSearch& search,
                         std::vector<TrialResult> results);
// The table of configurations, best first... in configuration order, with
// the best marked.
std::string FormatTable(const GridSearch& search,
                        const std::vector<ConfigSummary>& summaries);
// The best configuration and its k-fold accuracy.
std::string FormatBest(const GridSearch& search,
                       const std::vector<ConfigSummary>& summaries);
// Per process: live graph nodes first/max/last, RSS last/first, and the
// collector line (tools/consecutive_models_lib.h's FormatCollector).
std::string FormatProcessStats(const ProcessStats& stats);

}  // namespace graphgc::grid

#endif  // GRAPHGC_TOOLS_GRID_SEARCH_LIB_H_
