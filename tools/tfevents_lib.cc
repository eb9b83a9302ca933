#include "tools/tfevents_lib.h"

#include <algorithm>
#include <filesystem>
#include <new>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "serialize/event_file.h"
#include "serialize/graph.pb.h"
#include "serialize/parse_budget.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace graphgc::tfevents {
namespace {

namespace fs = std::filesystem;

// The scalar a summary value holds, if it holds one: simple_value, or a
// one-element float/double tensor (TF2-style scalar summaries).
std::optional<double> ScalarOf(const proto::Summary::Value& v) {
  if (v.value_case() == proto::Summary::Value::kSimpleValue) {
    return v.simple_value();
  }
  if (v.value_case() == proto::Summary::Value::kTensor) {
    const proto::TensorProto& t = v.tensor();
    if (t.float_val_size() == 1) return t.float_val(0);
    if (t.double_val_size() == 1) return t.double_val(0);
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> FindEventFiles(
    const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec) return FileError(ec, absl::StrCat("stat ", path));
  if (!fs::is_directory(st)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  fs::recursive_directory_iterator it(
      path, fs::directory_options::skip_permission_denied, ec);
  if (ec) return FileError(ec, absl::StrCat("list ", path));
  for (const fs::recursive_directory_iterator end; it != end;
       it.increment(ec)) {
    if (ec) return FileError(ec, absl::StrCat("list ", path));
    if (it->is_regular_file(ec) &&
        IsEventFileName(it->path().filename().string())) {
      files.push_back(it->path().string());
    }
  }
  if (ec) return FileError(ec, absl::StrCat("list ", path));
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

absl::StatusOr<EventFileSummary> Summarize(
    const std::string& path, const EventFileReaderOptions& options) {
  EventFileSummary s;
  s.path = path;
  // Open first: the reader refuses what is not a regular file (a FIFO
  // without blocking) with a clear status.
  GG_ASSIGN_OR_RETURN(std::unique_ptr<EventFileReader> reader,
                      EventFileReader::Open(path, options));
  std::error_code ec;
  s.size_bytes = fs::file_size(path, ec);
  if (ec) return FileError(ec, absl::StrCat("stat ", path));
  while (true) {
    const uint64_t offset = reader->offset();
    absl::StatusOr<std::optional<proto::Event>> next = reader->Next();
    if (!next.ok()) {
      s.corruption = next.status();
      break;
    }
    if (!next->has_value()) break;
    const proto::Event& e = **next;
    ++s.num_events;
    switch (e.what_case()) {
      case proto::Event::kFileVersion:
        if (s.file_version.empty()) s.file_version = e.file_version();
        break;
      case proto::Event::kGraphDef: {
        ++s.num_graphs;
        s.graph_bytes += static_cast<int64_t>(e.graph_def().size());
        proto::GraphDef g;
        const absl::Status parsed =
            ParseWithinBudget(e.graph_def(), options.max_event_bytes, &g);
        if (!parsed.ok()) {
          if (s.corruption.ok()) {
            const std::string where =
                absl::StrCat(path, ": record at byte offset ", offset, ": ");
            s.corruption =
                absl::IsResourceExhausted(parsed)
                    ? absl::ResourceExhaustedError(absl::StrCat(
                          where, "graph_def: ", parsed.message(),
                          " (EventFileReaderOptions::max_event_bytes)"))
                    : absl::DataLossError(absl::StrCat(
                          where, "graph_def is not a valid GraphDef: ",
                          parsed.message()));
          }
          break;
        }
        s.node_count = g.node_size();
        s.op_histogram.clear();
        for (const proto::NodeDef& n : g.node()) ++s.op_histogram[n.op()];
        break;
      }
      case proto::Event::kSummary:
        for (const proto::Summary::Value& v : e.summary().value()) {
          std::optional<double> x = ScalarOf(v);
          if (!x) continue;
          ScalarSeries& series = s.scalars[v.tag()];
          ++series.count;
          series.last_step = e.step();
          series.last_value = *x;
        }
        break;
      default:
        break;
    }
  }
  s.truncated_tail = reader->truncated_tail();
  return s;
}

}  // namespace

absl::StatusOr<EventFileSummary> SummarizeEventFile(
    const std::string& path, const EventFileReaderOptions& options) {
  try {
    return Summarize(path, options);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": out of memory summarising the events file"));
  }
}

std::string FormatSummary(const EventFileSummary& s) {
  std::string out = absl::StrCat(s.path, "\n");
  absl::StrAppend(&out, "  size:          ", s.size_bytes, " bytes\n");
  absl::StrAppend(&out, "  events:        ", s.num_events, "\n");
  if (!s.file_version.empty()) {
    absl::StrAppend(&out, "  file_version:  ", s.file_version, "\n");
  }
  absl::StrAppend(&out, "  graphs:        ", s.num_graphs, " (", s.graph_bytes,
                  " graph bytes)\n");
  if (s.num_graphs > 0) {
    absl::StrAppend(&out, "  nodes:         ", s.node_count, " (last graph)\n");
    std::vector<std::pair<std::string, int64_t>> ops(s.op_histogram.begin(),
                                                     s.op_histogram.end());
    // Most frequent first, then by name.
    std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
      return a.second > b.second;
    });
    for (const auto& [op, count] : ops) {
      absl::StrAppend(&out, absl::StrFormat("    %-24s %d\n", op, count));
    }
  }
  absl::StrAppend(&out, "  scalar tags:   ", s.scalars.size(), "\n");
  for (const auto& [tag, series] : s.scalars) {
    absl::StrAppend(&out, absl::StrFormat("    %-24s %d values, last %g at "
                                          "step %d\n",
                                          tag, series.count, series.last_value,
                                          series.last_step));
  }
  if (!s.corruption.ok()) {
    // A refusal for memory is not corruption: the record may be sound.
    absl::StrAppend(&out,
                    absl::IsResourceExhausted(s.corruption)
                        ? "  OVER BUDGET:   "
                        : "  CORRUPT:       ",
                    s.corruption.message(), "\n");
  }
  if (s.truncated_tail) {
    absl::StrAppend(&out,
                    "  torn tail:     file ends inside a record (still being "
                    "written, or the writer was killed)\n");
  }
  return out;
}

}  // namespace graphgc::tfevents
