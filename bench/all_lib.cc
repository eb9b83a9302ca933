// bench/all_lib.cc
#include "bench/all_lib.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphgc::bench {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  absl::StatusOr<Json> Document() {
    Json v;
    if (!Value(v, 0)) return Error();
    SkipSpace();
    if (pos_ != s_.size()) {
      error_ = "trailing characters";
      return Error();
    }
    return v;
  }

 private:
  absl::Status Error() const {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON: ", error_, " at byte ", pos_));
  }
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) {
      ++pos_;
    }
  }
  bool Expect(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    error_ = absl::StrCat("expected '", std::string(1, c), "'");
    return false;
  }
  bool Literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) {
      error_ = "bad literal";
      return false;
    }
    pos_ += w.size();
    return true;
  }
  bool String(std::string& out) {
    if (!Expect('"')) return false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      const char e = s_[pos_++];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'u': {
          if (pos_ + 4 > s_.size()) {
            error_ = "short \\u escape";
            return false;
          }
          const long code = std::strtol(s_.substr(pos_, 4).c_str(), nullptr, 16);
          pos_ += 4;
          out.push_back(code < 0x80 ? static_cast<char>(code) : '?');
          break;
        }
        default: out.push_back(e);  // '"', '\\', '/'
      }
    }
    error_ = "unterminated string";
    return false;
  }
  bool Value(Json& v, int depth) {
    if (depth > 64) {
      error_ = "nested too deeply";
      return false;
    }
    SkipSpace();
    if (pos_ >= s_.size()) {
      error_ = "unexpected end";
      return false;
    }
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = Json::Kind::kObject;
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      while (true) {
        std::string key;
        if (!String(key) || !Expect(':')) return false;
        Json member;
        if (!Value(member, depth + 1)) return false;
        v.object[key] = std::move(member);
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return Expect('}');
      }
    }
    if (c == '[') {
      ++pos_;
      v.kind = Json::Kind::kArray;
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      while (true) {
        Json item;
        if (!Value(item, depth + 1)) return false;
        v.array.push_back(std::move(item));
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return Expect(']');
      }
    }
    if (c == '"') {
      v.kind = Json::Kind::kString;
      return String(v.string);
    }
    if (c == 't' || c == 'f') {
      v.kind = Json::Kind::kBool;
      v.boolean = c == 't';
      return Literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      v.kind = Json::Kind::kNull;
      return Literal("null");
    }
    // A number (also inf/nan as some writers print them).
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    v.kind = Json::Kind::kNumber;
    v.number = std::strtod(begin, &end);
    if (end == begin) {
      error_ = "expected a value";
      return false;
    }
    pos_ += static_cast<size_t>(end - begin);
    return true;
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::string error_ = "malformed";
};

double NanosPer(const std::string& unit) {
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return 1;
}

std::string Number(double v) {
  if (v != 0 && (std::abs(v) >= 1e6 || std::abs(v) < 1e-3)) {
    return absl::StrFormat("%.3g", v);
  }
  return absl::StrFormat("%.3f", v);
}

}  // namespace

const Json* Json::Find(const std::string& key) const {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

absl::StatusOr<Json> ParseJson(const std::string& text) {
  return Parser(text).Document();
}

absl::StatusOr<std::vector<BenchRun>> ParseBenchmarkReport(
    const std::string& json) {
  absl::StatusOr<Json> doc = ParseJson(json);
  if (!doc.ok()) return doc.status();
  const Json* benchmarks = doc->Find("benchmarks");
  if (benchmarks == nullptr || benchmarks->kind != Json::Kind::kArray) {
    return absl::InvalidArgumentError("no \"benchmarks\" array in the report");
  }
  std::vector<BenchRun> runs;
  for (const Json& b : benchmarks->array) {
    const Json* type = b.Find("run_type");
    if (type != nullptr && type->string != "iteration") continue;
    const Json* name = b.Find("name");
    if (name == nullptr) continue;
    BenchRun run;
    run.name = name->string;
    const Json* unit = b.Find("time_unit");
    const double scale = NanosPer(unit ? unit->string : "ns");
    for (const auto& [key, value] : b.object) {
      if (value.kind != Json::Kind::kNumber) continue;
      const bool time = key == "real_time" || key == "cpu_time";
      run.values[key] = time ? value.number * scale : value.number;
    }
    const Json* error = b.Find("error_occurred");
    run.error = error != nullptr && error->boolean;
    runs.push_back(std::move(run));
  }
  return runs;
}

const BenchRun* FindRun(const std::vector<BenchRun>& runs,
                        const std::string& prefix) {
  for (const BenchRun& r : runs) {
    if (r.error) continue;
    if (r.name == prefix ||
        (r.name.size() > prefix.size() &&
         r.name.compare(0, prefix.size(), prefix) == 0 &&
         r.name[prefix.size()] == '/')) {
      return &r;
    }
  }
  return nullptr;
}

std::optional<double> RatioToTarget(const TargetRow& row) {
  if (!row.measured.has_value()) return std::nullopt;
  const double divisor =
      row.kind == TargetRow::Kind::kAtMost ? row.target : row.reference.value_or(0);
  if (row.kind == TargetRow::Kind::kEqual && !row.reference.has_value()) {
    return std::nullopt;
  }
  if (divisor == 0) return std::nullopt;
  return *row.measured / divisor;
}

bool MeetsTarget(const TargetRow& row) {
  if (!row.measured.has_value()) return false;
  if (row.kind == TargetRow::Kind::kAtMost) return *row.measured <= row.target;
  return row.reference.has_value() && *row.measured == *row.reference;
}

std::string FormatTargetTable(const std::vector<TargetRow>& rows) {
  std::string out = absl::StrFormat("%-62s %12s %14s %8s  %s\n", "target",
                                    "measured", "target", "ratio", "met");
  for (const TargetRow& r : rows) {
    const std::string measured =
        r.measured.has_value() ? Number(*r.measured) : "n/a";
    std::string target;
    if (r.kind == TargetRow::Kind::kAtMost) {
      target = "<= " + Number(r.target);
    } else {
      target = "== " + (r.reference.has_value() ? Number(*r.reference) : "n/a");
    }
    const std::optional<double> ratio = RatioToTarget(r);
    absl::StrAppendFormat(&out, "%-62s %12s %14s %8s  %s%s\n", r.what, measured,
                          target,
                          ratio.has_value() ? absl::StrFormat("%.3f", *ratio)
                                            : std::string("n/a"),
                          r.measured.has_value()
                              ? (MeetsTarget(r) ? "yes" : "NO")
                              : "not measured",
                          r.note.empty() ? "" : "  (" + r.note + ")");
  }
  return out;
}

std::map<std::string, double> ParseKeyValues(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    char* end = nullptr;
    const std::string value = line.substr(eq + 1);
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str()) continue;
    out[line.substr(0, eq)] = v;
  }
  return out;
}

}  // namespace graphgc::bench
