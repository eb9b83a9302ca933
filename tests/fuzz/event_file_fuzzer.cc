// tests/fuzz/event_file_fuzzer.cc
//
// libFuzzer target for TFRecordReader and EventFileReader. The first input
// byte picks how the rest becomes a file:
//   even: the bytes are the file, as is (framing and CRC checks);
//   odd:  the bytes are split at each "\n--\n" into records that are framed
//         with valid CRCs (EncodeTFRecord), so the Event parser and the
//         reader's record walk see well-framed data; the low bits of the
//         first byte also choose to chop bytes off the end (a torn tail).
// The file is then read to the end both as records and as events. Nothing
// may crash; every outcome must be a status or the end of data. Every
// record that parses as an Event (and every graph_def in one, as a
// GraphDef) must use no more memory than EstimateParsedBytes bounded it by
// (serialize/parse_budget.h), and a reader with a small budget must refuse
// rather than parse past it.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/statusor.h"
#include "google/protobuf/stubs/logging.h"
#include "serialize/event_file.h"
#include "serialize/graph.pb.h"
#include "serialize/parse_budget.h"
#include "serialize/tfrecord.h"

namespace {

const std::string& TempPath() {
  static const std::string* path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string tmpl = std::string(dir != nullptr ? dir : "/tmp") +
                       "/event_file_fuzzer.XXXXXX";
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
      std::perror("mkstemp");
      std::abort();
    }
    ::close(fd);
    static std::string owned = tmpl;
    std::atexit([] { ::unlink(owned.c_str()); });
    return &owned;
  }();
  return *path;
}

void WriteFile(const std::string& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (!bytes.empty() &&
      std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    std::abort();
  }
  std::fclose(f);
}

// Parses `bytes` as a `Message` with no budget and aborts if the parsed
// message uses more than the bound EstimateParsedBytes gave.
template <typename Message>
void CheckBound(std::string_view bytes) {
  Message m;
  uint64_t bound = 0;
  if (!graphgc::ParseWithinBudget(bytes, UINT64_MAX, &m, &bound).ok()) return;
  if (m.SpaceUsedLong() > bound) {
    std::fprintf(stderr,
                 "event_file_fuzzer: %s uses %zu bytes, over its bound %llu\n",
                 m.GetTypeName().c_str(), m.SpaceUsedLong(),
                 static_cast<unsigned long long>(bound));
    std::abort();
  }
  if constexpr (std::is_same_v<Message, graphgc::proto::Event>) {
    if (m.has_graph_def()) CheckBound<graphgc::proto::GraphDef>(m.graph_def());
  }
}

std::string Frame(std::string_view input, uint8_t mode) {
  std::string out;
  constexpr std::string_view kSep = "\n--\n";
  while (true) {
    size_t at = input.find(kSep);
    out += graphgc::EncodeTFRecord(input.substr(0, at));
    if (at == std::string_view::npos) break;
    input.remove_prefix(at + kSep.size());
  }
  const size_t chop = (mode >> 1) & 0x7;  // 0..7 bytes off the end
  out.resize(out.size() > chop ? out.size() - chop : 0);
  return out;
}

}  // namespace

// Protobuf logs every malformed UTF-8 string it parses; silence it so the
// fuzzer's output stays readable (and fast).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string& path = TempPath();
  WriteFile(path, (mode & 1) ? Frame(rest, mode) : std::string(rest));

  // As records.
  {
    absl::StatusOr<std::unique_ptr<graphgc::TFRecordReader>> reader =
        graphgc::TFRecordReader::Open(path);
    if (!reader.ok()) std::abort();  // the file exists
    uint64_t last_offset = 0;
    while (true) {
      absl::StatusOr<std::optional<std::string>> rec = (*reader)->Read();
      if (!rec.ok()) {
        // Corruption is sticky.
        if (absl::IsDataLoss(rec.status()) &&
            (*reader)->Read().status() != rec.status()) {
          std::abort();
        }
        break;
      }
      if (!rec->has_value()) break;
      CheckBound<graphgc::proto::Event>(**rec);
      if ((*reader)->offset() <= last_offset && last_offset != 0) std::abort();
      if ((*reader)->offset() != last_offset + graphgc::kTFRecordHeaderSize +
                                     (*rec)->size() +
                                     graphgc::kTFRecordFooterSize) {
        std::abort();
      }
      last_offset = (*reader)->offset();
    }
  }

  // As events.
  {
    absl::StatusOr<std::unique_ptr<graphgc::EventFileReader>> reader =
        graphgc::EventFileReader::Open(path);
    if (!reader.ok()) std::abort();
    while (true) {
      absl::StatusOr<std::optional<graphgc::proto::Event>> event =
          (*reader)->Next();
      if (!event.ok() || !event->has_value()) break;
      // Touch the parsed event the way a consumer would.
      (void)(*event)->ByteSizeLong();
      if ((*event)->has_summary()) {
        for (const auto& v : (*event)->summary().value()) (void)v.tag().size();
      }
    }
  }
  absl::StatusOr<std::vector<graphgc::proto::Event>> all =
      graphgc::EventFileReader::ReadAll(path);
  (void)all;
  // With budgets small enough for fuzzed inputs to pass them.
  absl::StatusOr<std::vector<graphgc::proto::Event>> small =
      graphgc::EventFileReader::ReadAll(
          path, nullptr, {.max_event_bytes = 4096, .max_total_bytes = 16384});
  if (small.ok()) {
    uint64_t used = 0;
    for (const auto& e : *small) used += e.SpaceUsedLong();
    if (used > 16384) {
      std::fprintf(stderr,
                   "event_file_fuzzer: ReadAll under a 16384-byte budget "
                   "returned events of %llu bytes\n",
                   static_cast<unsigned long long>(used));
      std::abort();
    }
  }
  return 0;
}
