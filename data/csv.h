// data/csv.h
//
// A labelled numeric dataset read from a CSV file: every row holds the same
// number of numeric features and, in its last column, an integer class label
// (scikit-learn's bundled datasets, e.g. digits.csv.gz, look like this). The
// file may be plain text or gzip-compressed (recognised by its magic bytes,
// inflated with Debian's zlib).
//
// Hostile files cost bounded memory: the file is read with ReadRegularFile
// (regular files only, a FIFO or a directory is refused) up to
// CsvOptions::max_bytes, and a gzip stream is inflated only up to the same
// limit. A bad field gets InvalidArgument naming the source, the 1-based
// line and column and the text ("digits.csv:12:5: 'x1' is not a number"); a
// truncated or corrupt gzip stream gets DataLoss naming the file. On error
// nothing is returned, so there is never a half-read dataset.
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
// Lines end in "\n" or "\r\n"; blank lines are skipped. Fields are decimal
// numbers (leading and trailing spaces allowed); the label is an integral
// number in [0, 2^31). Errors (InvalidArgument, "<source>:<line>:<column>:
// ..."): a field that is not a finite number, a row with another number of
// columns than the first, a label that is negative, fractional or too big,
// fewer than two columns, no rows at all.
absl::StatusOr<CsvDataset> ParseCsv(absl::string_view text,
                                    absl::string_view source,
                                    const CsvOptions& options = {});

// Inflate: the decompressed bytes of a gzip stream (one or more members),
// at most `max_bytes` of them (ResourceExhausted beyond), or DataLoss naming
// `source` when the stream is corrupt or ends early.
absl::StatusOr<std::string> Inflate(absl::string_view gzip,
                                    absl::string_view source,
                                    int64_t max_bytes);

// ReadCsv: reads `path` (plain or gzip) and parses it. Errors of the read
// (util/file.h) and of Inflate/ParseCsv, each naming the path.
absl::StatusOr<CsvDataset> ReadCsv(const std::string& path,
                                   const CsvOptions& options = {});

}  // namespace graphgc::data

#endif  // GRAPHGC_DATA_CSV_H_
