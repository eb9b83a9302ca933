// data/csv.h
//
// A labelled numeric dataset read from a CSV file: every row holds the same
// number of numeric features and, in its last column, an integer class label
// (scikit-learn's bundled datasets, e.g. digits.csv.gz, look like this). The
// file may be plain text or gzip-compressed (recognised by its magic bytes,
// inflated with Debian's zlib).
//
// Hostile files cost bounded memory. The memory budget
// (CsvOptions::max_memory_bytes, 256 MiB by default) covers the text (the
// file's bytes, or the inflated bytes of a gzip file) plus the parsed
// dataset (4 bytes per feature value and per label). The file is read with
// ReadRegularFile (regular files only, a FIFO or a directory is refused) and
// a gzip stream inflated only up to min(max_bytes, max_memory_bytes); the
// rows and columns are then counted and the dataset's size (rows x columns x
// 4 bytes, overflow-checked) compared with what is left of the budget before
// anything is allocated. Over the budget: ResourceExhausted naming the file
// and the budget. std::bad_alloc never leaves these functions (it becomes
// ResourceExhausted).
//
// A bad field gets InvalidArgument naming the source, the 1-based line and
// column and the text ("digits.csv:12:5: 'x1' is not a number", control
// bytes of the text C-escaped, e.g. '\000'); a truncated or corrupt gzip
// stream gets DataLoss naming the file. On error nothing is returned, so
// there is never a half-read dataset.
//
// Thread safety: the functions are thread-safe; a CsvDataset is a value.
//
// Example:
//   GG_ASSIGN_OR_RETURN(CsvDataset d, ReadCsv("digits.csv.gz"));
//   // d.rows == 1797, d.features == 64, d.x[r * d.features + c], d.labels[r]
#ifndef GRAPHGC_DATA_CSV_H_
#define GRAPHGC_DATA_CSV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphgc::data {

struct CsvOptions {
  // The most bytes read from the file and, for gzip, inflated from it.
  int64_t max_bytes = int64_t{1} << 30;
  // The first line names the columns and is skipped.
  bool header = false;
  // The most memory the text and the parsed dataset may take together
  // (ParseCsv: the dataset alone; the caller holds the text).
  int64_t max_memory_bytes = int64_t{256} << 20;
};

// CsvDataset: row-major features and one label per row.
struct CsvDataset {
  int64_t rows = 0;
  int64_t features = 0;         // columns minus the label column
  std::vector<float> x;         // rows * features values
  std::vector<int32_t> labels;  // rows values, each >= 0
  int32_t num_classes = 0;      // 1 + the largest label
};

// ParseCsv: the dataset in `text`; `source` names it in error messages.
// A UTF-8 byte order mark (EF BB BF) at the start is skipped. Lines end in
// "\n" or "\r\n"; blank lines are skipped. Fields are decimal numbers with
// at most one sign ("+1", "-1"; not "+-1"), leading and trailing spaces
// allowed; the label is an integral number in [0, 2^31). Errors
// (InvalidArgument, "<source>:<line>:<column>: ..."): a field that is not a
// finite number, a row with another number of columns than the first, a
// label that is negative, fractional or too big, fewer than two columns, no
// rows at all. ResourceExhausted when rows x columns x 4 bytes is over
// options.max_memory_bytes (checked before the dataset is allocated).
absl::StatusOr<CsvDataset> ParseCsv(absl::string_view text,
                                    absl::string_view source,
                                    const CsvOptions& options = {});

// Inflate: the decompressed bytes of a gzip stream (one or more members),
// at most `max_bytes` of them (ResourceExhausted beyond), or DataLoss naming
// `source` when the stream is corrupt or ends early.
absl::StatusOr<std::string> Inflate(absl::string_view gzip,
                                    absl::string_view source,
                                    int64_t max_bytes);

// ReadCsv: reads `path` (plain or gzip) and parses it, the text and the
// dataset within options.max_memory_bytes together. Errors of the read
// (util/file.h) and of Inflate/ParseCsv, each naming the path.
absl::StatusOr<CsvDataset> ReadCsv(const std::string& path,
                                   const CsvOptions& options = {});

}  // namespace graphgc::data

#endif  // GRAPHGC_DATA_CSV_H_
