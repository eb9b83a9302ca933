// serialize/event_file.h
//
// EventFileWriter and EventFileReader: TensorBoard events files, i.e.
// TFRecord files (serialize/tfrecord.h) of serialized proto::Event
// protos. Real TensorBoard reads what the writer writes.
//
// File layout: the writer names its file
//   <log_dir>/events.out.tfevents.<seconds>.<hostname>.<pid>.<n>.v2
// where n is a process-wide counter (so two writers in the same second get
// different names) and the file is created exclusively (an existing name is
// skipped, never truncated). The first event is
// {wall_time, file_version: "brain.Event:2"}.
//
// Durability: every event is written whole to the OS as soon as it is
// written (no user-space buffer), so a process killed mid-run leaves a file
// whose every whole record reads back, and at most one torn record at the
// end, which the reader reports as truncated_tail() rather than corruption.
//
// Errors: a failure to create the directory or the file, or to write
// (no permission, disk full, file size limit), is returned as a status by
// the call that hit it, and every later write returns the same status.
// Nothing here aborts.
//
// Thread safety: EventFileWriter is thread-safe (mu_ guards the file and
// the sticky status). EventFileReader is not; use one per thread.
//
// Example:
//   GG_ASSIGN_OR_RETURN(std::unique_ptr<EventFileWriter> w,
//                       EventFileWriter::Create("logs/0/train"));
//   GG_RETURN_IF_ERROR(w->WriteGraph(graph_def));
//   GG_RETURN_IF_ERROR(w->WriteScalar("epoch_loss", /*step=*/1, 0.25f));
//   GG_RETURN_IF_ERROR(w->Close());
//   GG_ASSIGN_OR_RETURN(std::vector<proto::Event> events,
//                       EventFileReader::ReadAll(w->path()));
#ifndef GRAPHGC_SERIALIZE_EVENT_FILE_H_
#define GRAPHGC_SERIALIZE_EVENT_FILE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "serialize/event.pb.h"
#include "serialize/graph.pb.h"
#include "serialize/tfrecord.h"
#include "util/mutex.h"

namespace graphgc {

// The file_version of the first event of every file we write.
inline constexpr char kEventFileVersion[] = "brain.Event:2";

// Prefix of every events file name.
inline constexpr char kEventFilePrefix[] = "events.out.tfevents.";

class EventFileWriter {
 public:
  // Creates `log_dir` (and its parents) if missing, then a new events file
  // in it, and writes the file_version event. Fails with a status naming
  // the directory or file if any step fails; an empty `log_dir`, or one
  // holding a NUL byte, is InvalidArgument and creates nothing.
  static absl::StatusOr<std::unique_ptr<EventFileWriter>> Create(
      const std::string& log_dir);

  // Like Create() but writes to exactly `path` (created or truncated; no
  // directory is made; see OpenFileSink). For tests, e.g. "/dev/full" to
  // simulate a full disk.
  static absl::StatusOr<std::unique_ptr<EventFileWriter>>
  CreateAtPathForTesting(const std::string& path);

  ~EventFileWriter();  // Close()s, dropping any error.
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // Appends `event`. A wall_time of 0 is replaced by the current time;
  // step is written as given.
  absl::Status WriteEvent(const proto::Event& event) ABSL_LOCKS_EXCLUDED(mu_);

  // Appends a scalar summary {tag, simple_value: value} at `step`, which
  // TensorBoard's scalar dashboard plots.
  absl::Status WriteScalar(std::string_view tag, int64_t step, float value)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Appends an event whose graph_def holds `graph` serialized. A graph
  // protobuf cannot serialize (over 2 GiB), or an event over
  // kMaxTFRecordBytes, is InvalidArgument and is not sticky.
  absl::Status WriteGraph(const proto::GraphDef& graph, int64_t step = 0)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Hands written events to the OS. Events are written through on each
  // call already, so this only reports the sticky status.
  absl::Status Flush() ABSL_LOCKS_EXCLUDED(mu_);

  // Closes the file. Later writes fail; calling Close() again returns the
  // same result.
  absl::Status Close() ABSL_LOCKS_EXCLUDED(mu_);

  // OK, or the first write error (sticky).
  absl::Status status() const ABSL_LOCKS_EXCLUDED(mu_);

  // Path of the events file. Fixed at creation.
  const std::string& path() const { return path_; }

 private:
  EventFileWriter(std::string path, std::unique_ptr<TFRecordWriter> writer);
  static absl::StatusOr<std::unique_ptr<EventFileWriter>> Start(
      std::string path, std::unique_ptr<RecordSink> sink);

  const std::string path_;
  mutable Mutex mu_;
  std::unique_ptr<TFRecordWriter> writer_ ABSL_GUARDED_BY(mu_);
};

// The memory one event may take once parsed, by default: twice the largest
// record, so every event an EventFileWriter can write reads back.
inline constexpr uint64_t kDefaultMaxEventBytes = 2 * kMaxTFRecordBytes;

// What an EventFileReader reads, and the memory it may spend on one file.
// A record's bytes do not bound its event's memory (packed fields and empty
// sub-messages expand many times over when parsed), so the reader bounds
// what each record parses to from the record's bytes before it parses
// anything (serialize/parse_budget.h). One Next() holds at most one
// record's bytes (max_record_bytes) and one event (max_event_bytes).
struct EventFileReaderOptions {
  // Longest record data accepted; a header claiming more is DataLoss (as
  // TFRecordReaderOptions::max_record_bytes).
  uint64_t max_record_bytes = kMaxTFRecordBytes;
  // The most memory one parsed event may take. A record whose event could
  // take more is ResourceExhausted, and nothing of it is parsed.
  uint64_t max_event_bytes = kDefaultMaxEventBytes;
  // ReadAll only: the most memory all the events it returns may take
  // together (each event's bound as above, plus its vector slot).
  uint64_t max_total_bytes = kDefaultMaxEventBytes;
};

// Reads the events of one file in order. Not thread-safe. Reads go through
// TFRecordReader: only regular files are opened (a FIFO is refused without
// blocking), and a record over options.max_record_bytes is DataLoss.
class EventFileReader {
 public:
  static absl::StatusOr<std::unique_ptr<EventFileReader>> Open(
      const std::string& path, EventFileReaderOptions options = {});

  // The next event, or std::nullopt at the end of data (clean end of file,
  // or a torn last record: see truncated_tail()). A corrupt record, or one
  // that is not an Event, is DataLoss naming the path and byte offset. A
  // record whose event could take more than options.max_event_bytes is
  // ResourceExhausted "<path>: record at byte offset N: parsing L bytes as
  // graphgc.proto.Event needs more than the budget of B bytes of memory
  // (EventFileReaderOptions::max_event_bytes)", with nothing parsed. Either
  // way later calls return the same status. Running out of memory anyway
  // is ResourceExhausted too (not sticky); nothing throws.
  absl::StatusOr<std::optional<proto::Event>> Next();

  // True if the last Next() stopped at a torn (incomplete) last record.
  bool truncated_tail() const { return records_->truncated_tail(); }
  // Byte offset of the next record.
  uint64_t offset() const { return records_->offset(); }
  const std::string& path() const { return records_->path(); }

  // Every event of `path`, or the first error (open failure, corruption, a
  // record over the budget as in Next()). Events that could take more than
  // options.max_total_bytes together are ResourceExhausted naming the path,
  // the record's byte offset and the budget; the record that would pass it
  // is not parsed. A torn tail is not an error; if `truncated_tail` is not
  // null it is set to whether the file ended in one.
  static absl::StatusOr<std::vector<proto::Event>> ReadAll(
      const std::string& path, bool* truncated_tail = nullptr,
      EventFileReaderOptions options = {});

 private:
  EventFileReader(std::unique_ptr<TFRecordReader> records,
                  EventFileReaderOptions options)
      : records_(std::move(records)), options_(options) {}

  // Next() with a parse budget of `budget` bytes, which `budget_name` names
  // in a refusal. Sets *event_bytes to the event's bound.
  absl::StatusOr<std::optional<proto::Event>> NextWithin(
      uint64_t budget, const std::string& budget_name, uint64_t* event_bytes);

  std::unique_ptr<TFRecordReader> records_;
  EventFileReaderOptions options_;
  absl::Status status_;  // first corruption or refusal, sticky
};

// Whether `filename` (a base name) looks like an events file.
bool IsEventFileName(std::string_view filename);

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_EVENT_FILE_H_
