// data/csv.cc
#include "data/csv.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <new>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace graphgc::data {
namespace {

constexpr size_t kInflateChunk = size_t{1} << 16;

bool IsGzip(absl::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// A field as a finite float, or nullopt-like false.
bool ParseNumber(absl::string_view field, double* out) {
  field = absl::StripAsciiWhitespace(field);
  if (!field.empty() && field.front() == '+') {
    field.remove_prefix(1);
    // from_chars takes a '-': "+-1" would read as -1.
    if (!field.empty() && field.front() == '-') return false;
  }
  if (field.empty()) return false;
  double value = 0;
  const char* end = field.data() + field.size();
  const std::from_chars_result r = std::from_chars(field.data(), end, value);
  if (r.ec != std::errc() || r.ptr != end || !std::isfinite(value)) {
    return false;
  }
  *out = value;
  return true;
}

absl::Status FieldError(absl::string_view source, int64_t line, int64_t column,
                        absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ":", line, ":", column, ": ", what));
}

// A field for an error message: shortened, and C-escaped so a NUL or
// another control byte of the file never reaches a terminal or log raw.
std::string Quoted(absl::string_view field) {
  constexpr size_t kMax = 40;
  if (field.size() <= kMax) return absl::StrCat("'", absl::CEscape(field), "'");
  return absl::StrCat("'", absl::CEscape(field.substr(0, kMax)), "...'");
}

constexpr absl::string_view kUtf8Bom = "\xEF\xBB\xBF";

absl::Status OverBudget(absl::string_view source, absl::string_view what,
                        int64_t budget) {
  return absl::ResourceExhaustedError(
      absl::StrCat(source, ": ", what, " is over the CSV memory budget of ",
                   budget, " bytes (CsvOptions::max_memory_bytes)"));
}

absl::Status OutOfMemory(absl::string_view source) {
  return absl::ResourceExhaustedError(
      absl::StrCat(source, ": out of memory reading the CSV"));
}

// The data rows of `text` (blank lines and the header skipped) and the
// columns of the first one: what ParseCsv will allocate for, counted
// without allocating.
void CountRows(absl::string_view text, bool header, int64_t* rows,
               int64_t* columns) {
  *rows = 0;
  *columns = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == absl::string_view::npos) end = text.size();
    const absl::string_view row = text.substr(pos, end - pos);
    pos = end + 1;
    if (absl::StripAsciiWhitespace(row).empty()) continue;
    if (header) {
      header = false;
      continue;
    }
    if (*rows == 0) {
      *columns =
          1 + static_cast<int64_t>(std::count(row.begin(), row.end(), ','));
    }
    ++*rows;
  }
}

}  // namespace

absl::StatusOr<std::string> Inflate(absl::string_view gzip,
                                    absl::string_view source,
                                    int64_t max_bytes) try {
  if (max_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": max_bytes is negative (", max_bytes, ")"));
  }
  std::string out;
  z_stream zs{};
  // 16 + MAX_WBITS: a gzip header and trailer, not zlib's.
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(absl::StrCat(source, ": inflateInit2 failed"));
  }
  size_t consumed = 0;
  int rc = Z_OK;
  absl::Status status;
  while (true) {
    const size_t in_left = gzip.size() - consumed;
    zs.next_in =
        reinterpret_cast<Bytef*>(const_cast<char*>(gzip.data())) + consumed;
    zs.avail_in = static_cast<uInt>(
        std::min<size_t>(in_left, std::numeric_limits<uInt>::max()));
    const size_t before = out.size();
    if (static_cast<int64_t>(before) >= max_bytes && rc != Z_STREAM_END) {
      // Room is full; one more byte would go past the limit.
      char probe = 0;
      zs.next_out = reinterpret_cast<Bytef*>(&probe);
      zs.avail_out = 1;
      const uInt avail_before = zs.avail_in;
      rc = inflate(&zs, Z_NO_FLUSH);
      consumed += avail_before - zs.avail_in;
      if (zs.avail_out == 0) {
        status = absl::ResourceExhaustedError(
            absl::StrCat(source, ": inflates to more than the ", max_bytes,
                         " bytes allowed"));
        break;
      }
    } else {
      const size_t room = std::min<size_t>(
          kInflateChunk, static_cast<size_t>(max_bytes) - before);
      out.resize(before + room);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + before);
      zs.avail_out = static_cast<uInt>(room);
      const uInt avail_before = zs.avail_in;
      rc = inflate(&zs, Z_NO_FLUSH);
      consumed += avail_before - zs.avail_in;
      out.resize(before + room - zs.avail_out);
    }
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow (as `cat a.gz b.gz` makes).
      if (consumed == gzip.size()) break;
      if (inflateReset(&zs) != Z_OK) {
        status = absl::InternalError(absl::StrCat(source, ": inflateReset"));
        break;
      }
      rc = Z_OK;
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && consumed == gzip.size()) {
      status = absl::DataLossError(
          absl::StrCat(source, ": gzip stream ends early (truncated after ",
                       gzip.size(), " bytes)"));
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      status = absl::DataLossError(
          absl::StrCat(source, ": corrupt gzip stream at input byte ", consumed,
                       ": ", zs.msg ? zs.msg : "inflate failed"));
      break;
    }
  }
  inflateEnd(&zs);
  if (!status.ok()) return status;
  return out;
} catch (const std::bad_alloc&) {
  return OutOfMemory(source);
}

namespace {

absl::StatusOr<CsvDataset> ParseCsvUnguarded(absl::string_view text,
                                             absl::string_view source,
                                             const CsvOptions& options) {
  if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) {
    text.remove_prefix(kUtf8Bom.size());
  }
  int64_t counted_rows = 0, counted_columns = 0;
  CountRows(text, options.header, &counted_rows, &counted_columns);
  // rows x columns x 4: the features (float) and the label (int32) of
  // each row; column mismatches are refused below, so this is exact.
  int64_t values = 0, bytes = 0;
  if (__builtin_mul_overflow(counted_rows, counted_columns, &values) ||
      __builtin_mul_overflow(values, int64_t{4}, &bytes) ||
      bytes > options.max_memory_bytes) {
    return OverBudget(source,
                      absl::StrCat("the dataset (", counted_rows, " rows x ",
                                   counted_columns, " columns x 4 bytes)"),
                      options.max_memory_bytes);
  }
  CsvDataset d;
  d.x.reserve(static_cast<size_t>(values - counted_rows));
  d.labels.reserve(static_cast<size_t>(counted_rows));
  int64_t columns = -1;
  int64_t line = 0;
  size_t pos = 0;
  bool skip_header = options.header;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == absl::string_view::npos) end = text.size();
    absl::string_view row = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    if (absl::StripAsciiWhitespace(row).empty()) continue;
    if (skip_header) {
      skip_header = false;
      continue;
    }
    const int64_t row_columns =
        1 + static_cast<int64_t>(std::count(row.begin(), row.end(), ','));
    if (columns < 0) {
      if (row_columns < 2) {
        return FieldError(source, line, 1,
                          "a row needs at least one feature and a label, got "
                          "1 column");
      }
      columns = row_columns;
      d.features = columns - 1;
    } else if (row_columns != columns) {
      return FieldError(source, line, std::min(row_columns, columns) + 1,
                        absl::StrCat("row has ", row_columns,
                                     " columns, the first row has ", columns));
    }
    size_t field_start = 0;
    for (int64_t c = 0; c < columns; ++c) {
      size_t comma = row.find(',', field_start);
      if (comma == absl::string_view::npos) comma = row.size();
      const absl::string_view field =
          row.substr(field_start, comma - field_start);
      field_start = comma + 1;
      double value = 0;
      if (!ParseNumber(field, &value)) {
        return FieldError(source, line, c + 1,
                          absl::StrCat(Quoted(field), " is not a number"));
      }
      if (c + 1 < columns) {
        if (std::fabs(value) > std::numeric_limits<float>::max()) {
          return FieldError(
              source, line, c + 1,
              absl::StrCat(Quoted(field), " is out of float range"));
        }
        d.x.push_back(static_cast<float>(value));
        continue;
      }
      if (value < 0 || value != std::floor(value) ||
          value > std::numeric_limits<int32_t>::max() - 1) {
        return FieldError(
            source, line, c + 1,
            absl::StrCat("label ", Quoted(field),
                         " is not an integer in [0, 2147483646]"));
      }
      const int32_t label = static_cast<int32_t>(value);
      d.labels.push_back(label);
      d.num_classes = std::max(d.num_classes, label + 1);
    }
    ++d.rows;
  }
  if (d.rows == 0) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": no data rows"));
  }
  return d;
}

}  // namespace

absl::StatusOr<CsvDataset> ParseCsv(absl::string_view text,
                                    absl::string_view source,
                                    const CsvOptions& options) try {
  return ParseCsvUnguarded(text, source, options);
} catch (const std::bad_alloc&) {
  return OutOfMemory(source);
}

absl::StatusOr<CsvDataset> ReadCsv(const std::string& path,
                                   const CsvOptions& options) try {
  const int64_t budget = options.max_memory_bytes;
  // The text counts against the budget: read and inflate no more of it.
  const int64_t text_cap = std::max<int64_t>(
      0, std::min(options.max_bytes, options.max_memory_bytes));
  absl::StatusOr<std::string> bytes = ReadRegularFile(path, text_cap);
  if (bytes.status().code() == absl::StatusCode::kResourceExhausted &&
      text_cap < options.max_bytes) {
    return OverBudget(path, "the file", budget);
  }
  if (!bytes.ok()) return bytes.status();
  if (IsGzip(*bytes)) {
    absl::StatusOr<std::string> text = Inflate(*bytes, path, text_cap);
    if (text.status().code() == absl::StatusCode::kResourceExhausted &&
        text_cap < options.max_bytes) {
      return OverBudget(path, "the inflated text", budget);
    }
    if (!text.ok()) return text.status();
    *bytes = *std::move(text);
  }
  CsvOptions rest = options;
  rest.max_memory_bytes = budget - static_cast<int64_t>(bytes->size());
  absl::StatusOr<CsvDataset> d = ParseCsvUnguarded(*bytes, path, rest);
  if (d.status().code() == absl::StatusCode::kResourceExhausted) {
    return OverBudget(
        path,
        absl::StrCat("the text (", bytes->size(), " bytes) plus the dataset"),
        budget);
  }
  return d;
} catch (const std::bad_alloc&) {
  return OutOfMemory(path);
}

}  // namespace graphgc::data
