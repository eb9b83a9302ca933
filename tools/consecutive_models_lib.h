// tools/consecutive_models_lib.h
//
// The logic of the `consecutive_models` demonstration: the seed program's
// scenario (one seed model after another on one graph, each fit for one
// epoch with a TensorBoard callback), measured per model, then a table and
// a closing summary. Kept apart from main() so tests can run it on a small
// scale and check the rows.
//
// RunConsecutiveModels() trains on the graph it is given (Graph::Default()
// when none) and changes that graph's GC policy when options.gc is false.
// The formatting and ratio functions are pure. Not thread-safe beyond what
// the graph guarantees: run one at a time per graph.
//
// Example:
//   GG_ASSIGN_OR_RETURN(RunResult r, RunConsecutiveModels({.models = 20}));
//   std::cout << FormatTable(r.rows) << FormatSummary(Summarize(r), r);
#ifndef GRAPHGC_TOOLS_CONSECUTIVE_MODELS_LIB_H_
#define GRAPHGC_TOOLS_CONSECUTIVE_MODELS_LIB_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gc/stats.h"
#include "runtime/graph.h"

namespace graphgc::consecutive {

struct RunRow;

struct Options {
  int models = 200;
  std::string logdir = "/tmp/graphgc_logs";  // model i writes logdir/<i>
  bool keep_alive = false;   // keep every model (and its callback) alive
  bool gc = true;            // false: set_gc_policy({.automatic = false})
  bool share_layer = false;  // every model reuses one Dense(64) layer
  int batch_size = 32;
  int threads = 0;  // SequentialOptions::intra_op_threads (0: every core)
  int samples = 1000;
  bool leak_report = false;  // fill RunResult::leak_report
  Graph* graph = nullptr;    // nullptr: Graph::Default()
  // Called after each model (e.g. to print a progress line); may be empty.
  std::function<void(const RunRow&, int models)> progress;
};

// What one model's fit measured.
struct RunRow {
  int run = 0;                 // 0-based, as the log directory
  int64_t event_bytes = 0;     // size of the events file
  int64_t graph_bytes = 0;     // graph_def payload, read back from the file
  int64_t nodes_exported = 0;  // nodes of that GraphDef
  int64_t live_nodes = 0;      // graph.num_nodes() right after the fit
  double fit_seconds = 0;      // Fit() alone (includes its callbacks)
  double us_per_sample = 0;    // fit_seconds / samples, in us
  float loss = 0;              // epoch loss
  int64_t collections = 0;     // gc_stats() so far
  double pause_ms_total = 0;   // total GC pause so far
  int64_t rss_kb = 0;          // VmRSS after the fit
};

struct RunResult {
  std::vector<RunRow> rows;
  GcStats gc;               // gc_stats() at the end of the run
  double wall_seconds = 0;  // the whole run, building models included
  std::string leak_report;  // with Options::leak_report
};

// Ratios of the last models to the first. Timings compare the median of
// the first min(10, n) models with the median of the last min(10, n), to
// damp noise; bytes and RSS compare the last model with the first.
struct Summary {
  int models = 0;
  int window = 0;  // models in each median window
  double event_bytes_ratio = 0;
  double graph_bytes_ratio = 0;
  double nodes_exported_ratio = 0;
  double us_per_sample_first = 0;  // median of the first window
  double us_per_sample_last = 0;   // median of the last window
  double us_per_sample_ratio = 0;
  int64_t rss_first_kb = 0;
  int64_t rss_last_kb = 0;
  double rss_ratio = 0;
  int64_t live_nodes_first = 0;
  int64_t live_nodes_last = 0;
  int64_t live_nodes_max = 0;
  GcStats gc;
  double wall_seconds = 0;
};

// Runs the scenario. Fails on the first error of building, fitting or
// reading back an events file, naming the model.
absl::StatusOr<RunResult> RunConsecutiveModels(const Options& options);

// The process's resident set (VmRSS of /proc/self/status) in kB; 0 if it
// cannot be read.
int64_t ProcessRssKb();

// Median of `values` (mean of the middle two for an even count); 0 if empty.
double Median(std::vector<double> values);
// last / first; 0 when first is 0.
double Ratio(double last, double first);

// Indices of the rows a table of n rows shows: all of them for n <= 30;
// otherwise the first 10, every k-th (k chosen for about 20 more), and the
// last.
std::vector<int> RowsToShow(int n);

Summary Summarize(const RunResult& result);

// The table of the rows RowsToShow() picks, with a header line.
std::string FormatTable(const std::vector<RunRow>& rows);
// The closing summary, several lines.
std::string FormatSummary(const Summary& summary);
// The collector's totals as one line ("Collector: N collections (M minor),
// ... ms total pause ..."), shared with the other tools.
std::string FormatCollector(const GcStats& gc);
// The summary as "key=value" lines, for scripts (bench/all reads it).
std::string FormatSummaryKeyValues(const Summary& summary);

}  // namespace graphgc::consecutive

#endif  // GRAPHGC_TOOLS_CONSECUTIVE_MODELS_LIB_H_
