// tools/consecutive_models: the seed program's scenario as a demonstration.
//
//   ./bazelw run -c opt //tools:consecutive_models -- --models=200
//       --logdir=/tmp/graphgc_logs [--gc=off] [--keep_alive] [--share_layer]
//
// Builds one seed model after another on the default graph, fits each for
// one epoch with a TensorBoard callback writing to <logdir>/<i>, prints a
// progress line per model on stderr, then a table (event-file and graph
// bytes, nodes exported, live graph nodes, us/sample, loss, collections,
// GC pause) and a summary of last/first ratios and the collector's totals.
// --gc=off turns automatic collection off, as TensorFlow would behave: the
// live graph then grows with every model while each export still holds only
// what its model reaches.
#include <cstdio>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "runtime/intra_op_threads.h"
#include "tools/consecutive_models_lib.h"

ABSL_FLAG(int, models, 200, "number of consecutive models");
ABSL_FLAG(std::string, logdir, "/tmp/graphgc_logs",
          "TensorBoard log directory; model i writes <logdir>/<i>");
ABSL_FLAG(bool, keep_alive, false, "keep every model alive in a vector");
ABSL_FLAG(std::string, gc, "on",
          "on: automatic collection (default policy); off: "
          "set_gc_policy({.automatic = false}), TensorFlow's behaviour");
ABSL_FLAG(bool, share_layer, false, "every model reuses one Dense(64) layer");
ABSL_FLAG(int, batch_size, 32, "fit batch size");
ABSL_FLAG(int, threads, 0,
          "SequentialOptions.intra_op_threads; 0: every core this process "
          "may use");
ABSL_FLAG(bool, leak_report, false,
          "after the run, print Graph::LeakReport() and an ExplainRetention "
          "example for one node of the last model");
ABSL_FLAG(int, samples, 1000, "training samples per fit");
ABSL_FLAG(std::string, summary_out, "",
          "if set, also write the summary as key=value lines to this file");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs the seed program's consecutive models and reports what they "
      "cost.");
  absl::ParseCommandLine(argc, argv);
  namespace cm = graphgc::consecutive;

  const std::string gc = absl::GetFlag(FLAGS_gc);
  if (gc != "on" && gc != "off") {
    std::fprintf(stderr, "--gc must be on or off, got '%s'\n", gc.c_str());
    return 2;
  }
  cm::Options options;
  options.models = absl::GetFlag(FLAGS_models);
  options.logdir = absl::GetFlag(FLAGS_logdir);
  options.keep_alive = absl::GetFlag(FLAGS_keep_alive);
  options.gc = gc == "on";
  options.share_layer = absl::GetFlag(FLAGS_share_layer);
  options.batch_size = absl::GetFlag(FLAGS_batch_size);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.samples = absl::GetFlag(FLAGS_samples);
  options.leak_report = absl::GetFlag(FLAGS_leak_report);
  options.progress = [](const cm::RunRow& r, int models) {
    std::fprintf(stderr,
                 "model %d/%d: %.3f us/sample, loss %.4f, %lld nodes "
                 "exported, %lld live\n",
                 r.run + 1, models, r.us_per_sample, r.loss,
                 static_cast<long long>(r.nodes_exported),
                 static_cast<long long>(r.live_nodes));
  };

  std::printf(
      "consecutive_models: %d models, gc=%s%s%s, batch %d, %d samples, %d "
      "thread(s), logs in %s/<i>\n",
      options.models, gc.c_str(), options.keep_alive ? ", keep_alive" : "",
      options.share_layer ? ", share_layer" : "", options.batch_size,
      options.samples, graphgc::ResolveIntraOpThreads(options.threads),
      options.logdir.c_str());
  std::fflush(stdout);
  absl::StatusOr<cm::RunResult> result = cm::RunConsecutiveModels(options);
  if (!result.ok()) {
    std::fprintf(stderr, "consecutive_models: %s\n",
                 result.status().ToString().c_str());
    return 1;
  }
  const cm::Summary summary = cm::Summarize(*result);
  std::cout << cm::FormatTable(result->rows) << "\n"
            << cm::FormatSummary(summary);
  if (options.leak_report) std::cout << "\n" << result->leak_report;
  const std::string summary_out = absl::GetFlag(FLAGS_summary_out);
  if (!summary_out.empty()) {
    FILE* f = std::fopen(summary_out.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "cannot write %s\n", summary_out.c_str());
      return 1;
    }
    const std::string kv = cm::FormatSummaryKeyValues(summary);
    std::fwrite(kv.data(), 1, kv.size(), f);
    std::fclose(f);
  }
  return 0;
}
