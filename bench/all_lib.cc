// bench/all_lib.cc
#include "bench/all_lib.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace graphgc::bench {
namespace {

using Json = nlohmann::json;

// Google Benchmark writes a NaN or infinite counter as the bare words NaN,
// Infinity (or -NaN, -Infinity), which JSON does not allow: outside strings
// they become null, so the counter reads as not measured.
std::string NonFiniteToNull(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    const size_t word = c == '-' ? i + 1 : i;
    bool replaced = false;
    for (const std::string_view bare : {"NaN", "Infinity"}) {
      if (text.compare(word, bare.size(), bare) == 0) {
        out += "null";
        i = word + bare.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(c);
  }
  return out;
}

absl::StatusOr<Json> ParseJson(const std::string& text) {
  // nlohmann reports syntax errors by exception only; it is caught here and
  // goes no further.
  try {
    return Json::parse(NonFiniteToNull(text));
  } catch (const Json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "benchmark report is not valid JSON (byte ", e.byte, "): ", e.what()));
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("benchmark report is not valid JSON: ", e.what()));
  }
}

// The string member `key` of object `j`, or `fallback`.
std::string StringMember(const Json& j, const char* key,
                         const std::string& fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

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

absl::StatusOr<std::vector<BenchRun>> ParseBenchmarkReport(
    const std::string& json) {
  absl::StatusOr<Json> doc = ParseJson(json);
  if (!doc.ok()) return doc.status();
  auto benchmarks = doc->is_object() ? doc->find("benchmarks") : doc->end();
  if (benchmarks == doc->end() || !benchmarks->is_array()) {
    return absl::InvalidArgumentError("no \"benchmarks\" array in the report");
  }
  std::vector<BenchRun> runs;
  for (const Json& b : *benchmarks) {
    if (!b.is_object()) continue;
    if (StringMember(b, "run_type", "iteration") != "iteration") continue;
    auto name = b.find("name");
    if (name == b.end() || !name->is_string()) continue;
    BenchRun run;
    run.name = name->get<std::string>();
    const double scale = NanosPer(StringMember(b, "time_unit", "ns"));
    for (const auto& [key, value] : b.items()) {
      if (!value.is_number()) continue;
      const bool time = key == "real_time" || key == "cpu_time";
      const double number = value.get<double>();
      run.values[key] = time ? number * scale : number;
    }
    auto error = b.find("error_occurred");
    run.error = error != b.end() && error->is_boolean() && error->get<bool>();
    runs.push_back(std::move(run));
  }
  return runs;
}

const BenchRun* FindRun(const std::vector<BenchRun>& runs,
                        const std::string& prefix) {
  for (const BenchRun& r : runs) {
    if (r.error) continue;
    if (r.name == prefix || (r.name.size() > prefix.size() &&
                             r.name.compare(0, prefix.size(), prefix) == 0 &&
                             r.name[prefix.size()] == '/')) {
      return &r;
    }
  }
  return nullptr;
}

std::optional<double> RatioToTarget(const TargetRow& row) {
  if (!row.measured.has_value()) return std::nullopt;
  const double divisor = row.kind == TargetRow::Kind::kEqual
                             ? row.reference.value_or(0)
                             : row.target;
  if (row.kind == TargetRow::Kind::kEqual && !row.reference.has_value()) {
    return std::nullopt;
  }
  if (divisor == 0) return std::nullopt;
  return *row.measured / divisor;
}

bool MeetsTarget(const TargetRow& row) {
  if (!row.measured.has_value()) return false;
  if (row.kind == TargetRow::Kind::kAtMost) return *row.measured <= row.target;
  if (row.kind == TargetRow::Kind::kAtLeast) return *row.measured >= row.target;
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
    } else if (r.kind == TargetRow::Kind::kAtLeast) {
      target = ">= " + Number(r.target);
    } else {
      target = "== " + (r.reference.has_value() ? Number(*r.reference) : "n/a");
    }
    const std::optional<double> ratio = RatioToTarget(r);
    absl::StrAppendFormat(
        &out, "%-62s %12s %14s %8s  %s%s\n", r.what, measured, target,
        ratio.has_value() ? absl::StrFormat("%.3f", *ratio)
                          : std::string("n/a"),
        r.measured.has_value() ? (MeetsTarget(r) ? "yes" : "NO")
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
