#include "serialize/event_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <new>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "serialize/parse_budget.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// Distinguishes files made by one process in the same second. Deliberately
// process-wide: the file name must be unique across all writers.
std::atomic<uint64_t> g_next_file_number{0};

double NowSeconds() {
  return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') {
    return "localhost";
  }
  return buf;
}

// Map entries (node attrs) sorted by key, so the same graph always gives the
// same bytes.
bool SerializeDeterministic(const google::protobuf::MessageLite& message,
                            std::string* out) {
  out->clear();
  google::protobuf::io::StringOutputStream stream(out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  return message.SerializeToCodedStream(&coded) && !coded.HadError();
}

}  // namespace

bool IsEventFileName(std::string_view filename) {
  return absl::StartsWith(absl::string_view(filename.data(), filename.size()),
                          kEventFilePrefix);
}

// ---- EventFileWriter ----

EventFileWriter::EventFileWriter(std::string path,
                                 std::unique_ptr<TFRecordWriter> writer)
    : path_(std::move(path)), writer_(std::move(writer)) {}

EventFileWriter::~EventFileWriter() { Close().IgnoreError(); }

absl::StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Start(
    std::string path, std::unique_ptr<RecordSink> sink) {
  std::unique_ptr<EventFileWriter> writer(new EventFileWriter(
      std::move(path), std::make_unique<TFRecordWriter>(std::move(sink))));
  proto::Event first;
  first.set_wall_time(NowSeconds());
  first.set_file_version(kEventFileVersion);
  absl::Status s = writer->WriteEvent(first);
  if (!s.ok()) return s;
  return writer;
}

absl::StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Create(
    const std::string& log_dir) {
  GG_RETURN_IF_ERROR(CheckPath(log_dir, "EventFileWriter log directory"));
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec) {
    return FileError(ec, absl::StrCat("EventFileWriter: cannot create log "
                                      "directory '",
                                      log_dir, "'"));
  }
  const std::string prefix = absl::StrCat(
      log_dir, log_dir.back() == '/' ? "" : "/", kEventFilePrefix,
      absl::ToUnixSeconds(absl::Now()), ".", HostName(), ".", ::getpid(), ".");
  // The counter makes names unique within this process; O_EXCL makes sure
  // we never truncate a file of another process that picked the same name.
  absl::Status last;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path = absl::StrCat(prefix, g_next_file_number++, ".v2");
    absl::StatusOr<std::unique_ptr<RecordSink>> sink =
        OpenFileSink(path, FileSinkMode::kExclusive);
    if (sink.ok()) return Start(std::move(path), *std::move(sink));
    last = sink.status();
    if (!absl::IsAlreadyExists(last)) break;
  }
  return absl::Status(last.code(),
                      absl::StrCat("EventFileWriter: ", last.message()));
}

absl::StatusOr<std::unique_ptr<EventFileWriter>>
EventFileWriter::CreateAtPathForTesting(const std::string& path) {
  GG_ASSIGN_OR_RETURN(std::unique_ptr<RecordSink> sink, OpenFileSink(path));
  return Start(path, std::move(sink));
}

absl::Status EventFileWriter::WriteEvent(const proto::Event& event) {
  std::string bytes;
  bool serialized;
  if (event.wall_time() == 0) {
    proto::Event stamped = event;
    stamped.set_wall_time(NowSeconds());
    serialized = stamped.SerializeToString(&bytes);
  } else {
    serialized = event.SerializeToString(&bytes);
  }
  if (!serialized) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": cannot serialize event at step ", event.step()));
  }
  WriterLock lock(mu_);
  return writer_->Write(bytes);
}

absl::Status EventFileWriter::WriteScalar(std::string_view tag, int64_t step,
                                          float value) {
  proto::Event event;
  event.set_wall_time(NowSeconds());
  event.set_step(step);
  proto::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  v->set_simple_value(value);
  return WriteEvent(event);
}

absl::Status EventFileWriter::WriteGraph(const proto::GraphDef& graph,
                                         int64_t step) {
  proto::Event event;
  event.set_wall_time(NowSeconds());
  event.set_step(step);
  if (!SerializeDeterministic(graph, event.mutable_graph_def())) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": cannot serialize GraphDef of ", graph.node_size(), " nodes"));
  }
  return WriteEvent(event);
}

absl::Status EventFileWriter::Flush() {
  WriterLock lock(mu_);
  return writer_->Flush();
}

absl::Status EventFileWriter::Close() {
  WriterLock lock(mu_);
  return writer_->Close();
}

absl::Status EventFileWriter::status() const {
  ReaderLock lock(mu_);
  return writer_->status();
}

// ---- EventFileReader ----

absl::StatusOr<std::unique_ptr<EventFileReader>> EventFileReader::Open(
    const std::string& path, EventFileReaderOptions options) {
  GG_ASSIGN_OR_RETURN(
      std::unique_ptr<TFRecordReader> records,
      TFRecordReader::Open(path,
                           {.max_record_bytes = options.max_record_bytes}));
  return std::unique_ptr<EventFileReader>(
      new EventFileReader(std::move(records), options));
}

absl::StatusOr<std::optional<proto::Event>> EventFileReader::Next() {
  uint64_t event_bytes;
  return NextWithin(options_.max_event_bytes,
                    "EventFileReaderOptions::max_event_bytes", &event_bytes);
}

absl::StatusOr<std::optional<proto::Event>> EventFileReader::NextWithin(
    uint64_t budget, const std::string& budget_name, uint64_t* event_bytes) {
  if (!status_.ok()) return status_;
  const uint64_t record_offset = records_->offset();
  absl::StatusOr<std::optional<std::string>> record = records_->Read();
  if (!record.ok()) return record.status();
  if (!record->has_value()) return std::nullopt;
  const std::string where =
      absl::StrCat(path(), ": record at byte offset ", record_offset, ": ");
  proto::Event event;
  const absl::Status parsed =
      ParseWithinBudget(**record, budget, &event, event_bytes);
  if (absl::IsResourceExhausted(parsed)) {
    status_ = absl::ResourceExhaustedError(
        absl::StrCat(where, parsed.message(), " (", budget_name, ")"));
    return status_;
  }
  if (!parsed.ok()) {
    status_ = absl::DataLossError(
        absl::StrCat(where, "not a valid Event protobuf (", (*record)->size(),
                     " bytes): ", parsed.message()));
    return status_;
  }
  return event;
}

absl::StatusOr<std::vector<proto::Event>> EventFileReader::ReadAll(
    const std::string& path, bool* truncated_tail,
    EventFileReaderOptions options) {
  GG_ASSIGN_OR_RETURN(std::unique_ptr<EventFileReader> reader,
                      Open(path, options));
  // Each event also takes its slot in `events`, which grows by doubling.
  constexpr uint64_t kSlotBytes = 3 * sizeof(proto::Event);
  std::vector<proto::Event> events;
  uint64_t total = 0;
  try {
    while (true) {
      const uint64_t left = options.max_total_bytes > total + kSlotBytes
                                ? options.max_total_bytes - total - kSlotBytes
                                : 0;
      const bool total_binds = left < options.max_event_bytes;
      uint64_t event_bytes = 0;
      GG_ASSIGN_OR_RETURN(
          std::optional<proto::Event> event,
          reader->NextWithin(
              total_binds ? left : options.max_event_bytes,
              total_binds
                  ? absl::StrCat("EventFileReaderOptions::max_total_bytes of ",
                                 options.max_total_bytes, ", of which the ",
                                 events.size(), " events before take ", total)
                  : "EventFileReaderOptions::max_event_bytes",
              &event_bytes));
      if (!event.has_value()) break;
      total += event_bytes + kSlotBytes;
      events.push_back(std::move(*event));
    }
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": out of memory reading events (", events.size(),
                     " read, up to byte offset ", reader->offset(), ")"));
  }
  if (truncated_tail != nullptr) *truncated_tail = reader->truncated_tail();
  return events;
}

}  // namespace graphgc
