// data/csv.cc
#include "data/csv.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
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
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
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

// Shortens a field for an error message.
std::string Quoted(absl::string_view field) {
  constexpr size_t kMax = 40;
  if (field.size() <= kMax) return absl::StrCat("'", field, "'");
  return absl::StrCat("'", field.substr(0, kMax), "...'");
}

}  // namespace

absl::StatusOr<std::string> Inflate(absl::string_view gzip,
                                    absl::string_view source,
                                    int64_t max_bytes) {
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
}

absl::StatusOr<CsvDataset> ParseCsv(absl::string_view text,
                                    absl::string_view source,
                                    const CsvOptions& options) {
  CsvDataset d;
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

absl::StatusOr<CsvDataset> ReadCsv(const std::string& path,
                                   const CsvOptions& options) {
  GG_ASSIGN_OR_RETURN(std::string bytes,
                      ReadRegularFile(path, options.max_bytes));
  if (IsGzip(bytes)) {
    GG_ASSIGN_OR_RETURN(bytes, Inflate(bytes, path, options.max_bytes));
  }
  return ParseCsv(bytes, path, options);
}

}  // namespace graphgc::data
