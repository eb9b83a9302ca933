// tests/fuzz/csv_fuzzer.cc
//
// libFuzzer target for the CSV reader (data/csv.h). The first input byte
// picks how the rest is read:
//   bit 0 clear: the rest is the text: ParseCsv;
//   bit 0 set, bit 2 clear: the rest is gzip-compressed here (zlib, level
//     from bits 4-7), then Inflate + ParseCsv, as ReadCsv reads a .gz;
//   bit 0 set, bit 2 set: the rest is the gzip stream itself (corrupt,
//     truncated, a bomb): Inflate + ParseCsv.
// Bit 1 sets CsvOptions::header. Text and dataset share a 1 MiB budget, as
// in ReadCsv, so a dataset the budget does not hold must be refused before
// it is allocated (libFuzzer's -malloc_limit_mb reports any allocation
// past it). Nothing may crash; on success the dataset is consistent:
// rows x features values, one label per row in [0, num_classes), the
// largest label num_classes - 1, every value finite.
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data/csv.h"

namespace {

constexpr int64_t kBudget = int64_t{1} << 20;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "csv_fuzzer: invariant broken: %s\n", what);
    std::abort();
  }
}

// `bytes` as one gzip member at `level`.
std::string Gzip(absl::string_view bytes, int level) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    std::abort();
  }
  std::string out(deflateBound(&zs, bytes.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  Check(deflate(&zs, Z_FINISH) == Z_STREAM_END, "deflate finishes");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

void CheckDataset(const graphgc::data::CsvDataset& d) {
  Check(d.rows >= 1 && d.features >= 1, "at least one row and feature");
  Check(d.x.size() == static_cast<size_t>(d.rows * d.features),
        "rows * features == x.size()");
  Check(d.labels.size() == static_cast<size_t>(d.rows), "one label per row");
  int32_t largest = -1;
  for (int32_t label : d.labels) {
    Check(label >= 0 && label < d.num_classes, "label in [0, num_classes)");
    if (label > largest) largest = label;
  }
  Check(largest + 1 == d.num_classes, "num_classes is 1 + the largest");
  for (float v : d.x) Check(std::isfinite(v), "finite values");
  Check(static_cast<int64_t>(d.x.size() + d.labels.size()) * 4 <= kBudget,
        "the dataset within the budget");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const absl::string_view rest(reinterpret_cast<const char*>(data + 1),
                               size - 1);
  graphgc::data::CsvOptions options;
  options.header = (mode & 2) != 0;
  options.max_memory_bytes = kBudget;
  if ((mode & 1) == 0) {
    absl::StatusOr<graphgc::data::CsvDataset> d =
        graphgc::data::ParseCsv(rest, "fuzz.csv", options);
    if (d.ok()) CheckDataset(*d);
    return 0;
  }
  std::string gzip;
  if ((mode & 4) == 0) {
    gzip = Gzip(rest, (mode >> 4) % 10);
  } else {
    gzip = std::string(rest);
  }
  absl::StatusOr<std::string> text =
      graphgc::data::Inflate(gzip, "fuzz.csv.gz", kBudget);
  if (!text.ok()) {
    Check((mode & 4) != 0 || rest.size() > static_cast<size_t>(kBudget),
          "what zlib compressed inflates");
    return 0;
  }
  Check(static_cast<int64_t>(text->size()) <= kBudget, "inflated <= cap");
  if ((mode & 4) == 0) Check(*text == rest, "inflate round-trips");
  options.max_memory_bytes = kBudget - static_cast<int64_t>(text->size());
  absl::StatusOr<graphgc::data::CsvDataset> d =
      graphgc::data::ParseCsv(*text, "fuzz.csv.gz", options);
  if (d.ok()) CheckDataset(*d);
  return 0;
}
