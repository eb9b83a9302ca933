// tools/tfevents_lib.h
//
// The logic of the `tfevents` command: find events files under a path and
// summarise each (size, events, graph size and op histogram, scalar tags,
// corruption or torn tail). Kept apart from main() so tests can call it.
// Pure functions over their arguments and the files they read: thread-safe.
#ifndef GRAPHGC_TOOLS_TFEVENTS_LIB_H_
#define GRAPHGC_TOOLS_TFEVENTS_LIB_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "serialize/event_file.h"

namespace graphgc::tfevents {

// One scalar series (one tag) of a file.
struct ScalarSeries {
  int64_t count = 0;
  int64_t last_step = 0;
  double last_value = 0;
};

// What one events file holds. Counts cover the records before the first
// problem, if any.
struct EventFileSummary {
  std::string path;
  uint64_t size_bytes = 0;
  int64_t num_events = 0;
  std::string file_version;  // of the first file_version event, if any
  int64_t num_graphs = 0;    // graph_def events
  int64_t graph_bytes = 0;   // payload bytes of all graph_def events
  // Of the last graph_def event:
  int64_t node_count = 0;
  std::map<std::string, int64_t> op_histogram;  // op -> node count
  std::map<std::string, ScalarSeries> scalars;  // tag -> series
  // First corrupt record (DataLoss, with its byte offset), a graph_def
  // payload that is not a GraphDef, or a record whose event or GraphDef
  // could take more memory than the budget (ResourceExhausted, with its
  // byte offset; nothing of it is parsed). OK if none.
  absl::Status corruption;
  bool truncated_tail = false;  // the file ends inside a record
};

// Event files named by `path`: the file itself, or every file whose name
// starts with "events.out.tfevents." below the directory `path`, sorted.
absl::StatusOr<std::vector<std::string>> FindEventFiles(
    const std::string& path);

// Reads `path` to its end (or first corrupt record). A file that cannot be
// opened is an error, and so is anything but a regular file (a FIFO is
// refused at once, not waited on); corruption, including a record over
// kMaxTFRecordBytes, is reported in the summary instead, and so is a record
// over the memory budget: one event, and the GraphDef of a graph_def event,
// may each take at most options.max_event_bytes once parsed (bounded before
// parsing: serialize/event_file.h). Running out of memory anyway is
// ResourceExhausted; nothing throws.
absl::StatusOr<EventFileSummary> SummarizeEventFile(
    const std::string& path, const EventFileReaderOptions& options = {});

// Human-readable multi-line report of one summary.
std::string FormatSummary(const EventFileSummary& summary);

}  // namespace graphgc::tfevents

#endif  // GRAPHGC_TOOLS_TFEVENTS_LIB_H_
