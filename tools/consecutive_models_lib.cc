// tools/consecutive_models_lib.cc
#include "tools/consecutive_models_lib.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/sequential.h"
#include "runtime/tensor.h"
#include "tools/seed_workload.h"
#include "tools/tfevents_lib.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace graphgc::consecutive {
namespace {

// A node of `model` worth explaining: its first MatMul (held through the
// model's training step), else its first node.
std::optional<std::string> SomeNodeOf(const Sequential& model) {
  Graph& g = model.graph();
  absl::StatusOr<std::vector<NodeHandle>> nodes =
      g.ReachableFrom(model.GraphRoots());
  if (!nodes.ok() || nodes->empty()) return std::nullopt;
  std::optional<std::string> first;
  for (const NodeHandle& h : *nodes) {
    absl::StatusOr<NodeInfo> info = g.Describe(h);
    if (!info.ok()) continue;
    if (!first.has_value()) first = info->name;
    if (info->op == "MatMul") return info->name;
  }
  return first;
}

std::string LeakReportText(const Sequential& last) {
  Graph& g = last.graph();
  std::string out =
      absl::StrFormat("Leak report: %d live nodes\n", g.num_nodes());
  absl::StrAppendFormat(&out, "  %-48s %10s %12s\n", "owner", "nodes", "bytes");
  const std::vector<OwnerUsage> usage = g.LeakReport();
  constexpr size_t kMaxOwners = 20;  // the largest; the rest summed
  int64_t rest_nodes = 0, rest_bytes = 0;
  for (size_t i = 0; i < usage.size(); ++i) {
    const OwnerUsage& u = usage[i];
    if (i < kMaxOwners) {
      absl::StrAppendFormat(&out, "  %-48s %10d %12d\n", u.owner, u.nodes,
                            u.bytes);
    } else {
      rest_nodes += u.nodes;
      rest_bytes += u.bytes;
    }
  }
  if (usage.size() > kMaxOwners) {
    absl::StrAppendFormat(
        &out, "  %-48s %10d %12d\n",
        absl::StrCat("(", usage.size() - kMaxOwners, " more owners)"),
        rest_nodes, rest_bytes);
  }
  std::optional<std::string> node = SomeNodeOf(last);
  if (!node.has_value()) return out;
  absl::StrAppend(&out, "ExplainRetention(\"", *node, "\"):\n");
  absl::StatusOr<std::vector<std::string>> chain = g.ExplainRetention(*node);
  if (!chain.ok()) {
    absl::StrAppend(&out, "  ", chain.status().ToString(), "\n");
    return out;
  }
  for (size_t i = 0; i < chain->size(); ++i) {
    absl::StrAppend(&out, "  ", std::string(2 * i, ' '), i ? "-> " : "",
                    (*chain)[i], "\n");
  }
  return out;
}

}  // namespace

int64_t ProcessRssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream in(line.substr(6));
      int64_t kb = 0;
      in >> kb;
      return kb;
    }
  }
  return 0;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double Ratio(double last, double first) {
  return first == 0 ? 0 : last / first;
}

absl::StatusOr<RunResult> RunConsecutiveModels(const Options& options) {
  if (options.models < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--models must be at least 1, got ", options.models));
  }
  if (options.samples < 1 || options.batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--samples and --batch_size must be at least 1, got ",
                     options.samples, ", ", options.batch_size));
  }
  if (options.threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--threads must be 0 (every core) or more, got ", options.threads));
  }
  // Model i writes to logdir/<i>: an empty logdir would mean /<i> at the
  // filesystem root.
  GG_RETURN_IF_ERROR(CheckPath(options.logdir, "--logdir"));
  Graph& graph = options.graph ? *options.graph : Graph::Default();
  if (!options.gc) {
    GcPolicy policy = graph.collector().policy();
    policy.automatic = false;
    graph.set_gc_policy(policy);
  }
  GG_ASSIGN_OR_RETURN(const auto data, seed::Data(options.samples));
  const auto& [x, y] = data;
  std::optional<Layer> shared;
  if (options.share_layer) {
    shared = layers::Dense(64, {.activation = "relu"});
  }

  RunResult result;
  std::vector<Sequential> alive;
  std::vector<std::shared_ptr<callbacks::TensorBoard>> alive_callbacks;
  std::optional<Sequential> last;
  const auto run_start = std::chrono::steady_clock::now();
  for (int i = 0; i < options.models; ++i) {
    last.reset();  // the previous model is dropped here unless kept
    GG_ASSIGN_OR_RETURN(Sequential model,
                        seed::Model(graph, options.threads, shared));
    auto tensorboard = callbacks::TensorBoard::Create(
        {.log_dir = absl::StrCat(options.logdir, "/", i), .update_freq = 600});
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<History> history =
        model.Fit(x, y,
                  {.batch_size = options.batch_size,
                   .verbose = 0,
                   .callbacks = {tensorboard}});
    const auto end = std::chrono::steady_clock::now();
    if (!history.ok()) {
      return absl::Status(
          history.status().code(),
          absl::StrCat("model ", i, ": ", history.status().message()));
    }
    RunRow row;
    row.run = i;
    row.live_nodes = graph.num_nodes();
    row.fit_seconds = std::chrono::duration<double>(end - start).count();
    row.us_per_sample = row.fit_seconds * 1e6 / options.samples;
    const std::vector<float>& loss = history->values("loss");
    row.loss = loss.empty() ? 0 : loss.back();
    const GcStats gc = graph.gc_stats();
    row.collections = gc.collections;
    row.pause_ms_total = gc.pause_ns_total / 1e6;
    row.rss_kb = ProcessRssKb();
    absl::StatusOr<tfevents::EventFileSummary> file =
        tfevents::SummarizeEventFile(tensorboard->train_path());
    if (!file.ok()) {
      return absl::Status(
          file.status().code(),
          absl::StrCat("model ", i, ": ", file.status().message()));
    }
    if (!file->corruption.ok()) {
      return absl::DataLossError(
          absl::StrCat("model ", i, ": ", file->corruption.message()));
    }
    row.event_bytes = static_cast<int64_t>(file->size_bytes);
    row.graph_bytes = file->graph_bytes;
    row.nodes_exported = file->node_count;
    result.rows.push_back(row);
    if (options.progress) options.progress(row, options.models);
    if (options.keep_alive) {
      alive.push_back(model);
      alive_callbacks.push_back(tensorboard);
    }
    last = std::move(model);
  }
  result.wall_seconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - run_start)
                            .count();
  result.gc = graph.gc_stats();
  if (options.leak_report && last.has_value()) {
    result.leak_report = LeakReportText(*last);
  }
  return result;
}

std::vector<int> RowsToShow(int n) {
  std::vector<int> rows;
  if (n <= 30) {
    for (int i = 0; i < n; ++i) rows.push_back(i);
    return rows;
  }
  const int k = std::max(1, (n - 10) / 20);
  for (int i = 0; i < 10; ++i) rows.push_back(i);
  for (int i = 10 + k - 1; i < n - 1; i += k) rows.push_back(i);
  rows.push_back(n - 1);
  return rows;
}

Summary Summarize(const RunResult& result) {
  Summary s;
  const std::vector<RunRow>& rows = result.rows;
  s.models = static_cast<int>(rows.size());
  s.gc = result.gc;
  s.wall_seconds = result.wall_seconds;
  if (rows.empty()) return s;
  const RunRow& first = rows.front();
  const RunRow& last = rows.back();
  s.window = std::min<int>(10, s.models);
  std::vector<double> head, tail;
  for (int i = 0; i < s.window; ++i) {
    head.push_back(rows[i].us_per_sample);
    tail.push_back(rows[s.models - s.window + i].us_per_sample);
  }
  s.us_per_sample_first = Median(head);
  s.us_per_sample_last = Median(tail);
  s.us_per_sample_ratio = Ratio(s.us_per_sample_last, s.us_per_sample_first);
  s.event_bytes_ratio = Ratio(last.event_bytes, first.event_bytes);
  s.graph_bytes_ratio = Ratio(last.graph_bytes, first.graph_bytes);
  s.nodes_exported_ratio = Ratio(last.nodes_exported, first.nodes_exported);
  s.rss_first_kb = first.rss_kb;
  s.rss_last_kb = last.rss_kb;
  s.rss_ratio = Ratio(last.rss_kb, first.rss_kb);
  s.live_nodes_first = first.live_nodes;
  s.live_nodes_last = last.live_nodes;
  for (const RunRow& r : rows) {
    s.live_nodes_max = std::max(s.live_nodes_max, r.live_nodes);
  }
  return s;
}

std::string FormatTable(const std::vector<RunRow>& rows) {
  std::string out =
      absl::StrFormat("%5s %12s %12s %9s %11s %10s %8s %12s %13s\n", "run",
                      "event bytes", "graph bytes", "nodes", "live nodes",
                      "us/sample", "loss", "collections", "GC pause ms");
  const int n = static_cast<int>(rows.size());
  int previous = -1;
  for (int i : RowsToShow(n)) {
    if (previous >= 0 && i != previous + 1) {
      absl::StrAppend(&out, "  ...\n");
    }
    previous = i;
    const RunRow& r = rows[i];
    absl::StrAppendFormat(
        &out, "%5d %12d %12d %9d %11d %10.3f %8.4f %12d %13.2f\n", r.run,
        r.event_bytes, r.graph_bytes, r.nodes_exported, r.live_nodes,
        r.us_per_sample, r.loss, r.collections, r.pause_ms_total);
  }
  return out;
}

std::string FormatSummary(const Summary& s) {
  std::string out =
      absl::StrFormat("Summary of %d models (%.1f s in all; last / first):\n",
                      s.models, s.wall_seconds);
  absl::StrAppendFormat(&out, "  event-file bytes   %8.4f\n",
                        s.event_bytes_ratio);
  absl::StrAppendFormat(&out, "  graph bytes        %8.4f\n",
                        s.graph_bytes_ratio);
  absl::StrAppendFormat(&out, "  nodes exported     %8.4f\n",
                        s.nodes_exported_ratio);
  absl::StrAppendFormat(
      &out,
      "  us/sample          %8.4f  (median of the last %d: %.3f us vs "
      "median of the first %d: %.3f us, medians to damp noise)\n",
      s.us_per_sample_ratio, s.window, s.us_per_sample_last, s.window,
      s.us_per_sample_first);
  absl::StrAppendFormat(
      &out,
      "  process RSS        %8.4f  (%d kB after the last model vs %d kB "
      "after model 1)\n",
      s.rss_ratio, s.rss_last_kb, s.rss_first_kb);
  absl::StrAppendFormat(
      &out, "  live graph nodes   first %d, last %d, max %d\n",
      s.live_nodes_first, s.live_nodes_last, s.live_nodes_max);
  absl::StrAppend(&out, FormatCollector(s.gc));
  return out;
}

std::string FormatCollector(const GcStats& gc) {
  return absl::StrFormat(
      "Collector: %d collections (%d minor), %d nodes swept, %.2f ms total "
      "pause (last %.3f ms), peak %d nodes, %d live now\n",
      gc.collections, gc.minor_collections, gc.swept_total,
      gc.pause_ns_total / 1e6, gc.last_pause_ns / 1e6, gc.peak_nodes,
      gc.live_nodes);
}

std::string FormatSummaryKeyValues(const Summary& s) {
  std::string out;
  auto add = [&out](const char* key, double value) {
    absl::StrAppendFormat(&out, "%s=%.6g\n", key, value);
  };
  add("models", s.models);
  add("wall_seconds", s.wall_seconds);
  add("event_bytes_ratio", s.event_bytes_ratio);
  add("graph_bytes_ratio", s.graph_bytes_ratio);
  add("nodes_exported_ratio", s.nodes_exported_ratio);
  add("us_per_sample_first", s.us_per_sample_first);
  add("us_per_sample_last", s.us_per_sample_last);
  add("us_per_sample_ratio", s.us_per_sample_ratio);
  add("rss_first_kb", static_cast<double>(s.rss_first_kb));
  add("rss_last_kb", static_cast<double>(s.rss_last_kb));
  add("rss_ratio", s.rss_ratio);
  add("live_nodes_first", static_cast<double>(s.live_nodes_first));
  add("live_nodes_last", static_cast<double>(s.live_nodes_last));
  add("live_nodes_max", static_cast<double>(s.live_nodes_max));
  add("collections", static_cast<double>(s.gc.collections));
  add("swept_total", static_cast<double>(s.gc.swept_total));
  add("pause_ms_total", s.gc.pause_ns_total / 1e6);
  add("peak_nodes", static_cast<double>(s.gc.peak_nodes));
  return out;
}

}  // namespace graphgc::consecutive
