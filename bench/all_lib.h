// bench/all_lib.h
//
// The logic of `//bench:all`: read Google Benchmark JSON reports (with
// Debian's nlohmann-json, as models/saving.cc does), pick the figures the
// issues set targets for, and format one table of target, measured figure and
// ratio. Pure functions over their arguments: thread-safe.
#ifndef GRAPHGC_BENCH_ALL_LIB_H_
#define GRAPHGC_BENCH_ALL_LIB_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace graphgc::bench {

// One benchmark run of a report: its name and every numeric field
// (real_time and cpu_time converted to nanoseconds, counters as written).
struct BenchRun {
  std::string name;
  std::map<std::string, double> values;
  bool error = false;
};

// The "iteration" runs of a Google Benchmark JSON report (aggregates are
// skipped). InvalidArgument naming the byte offset on malformed JSON, or
// when there is no "benchmarks" array. A NaN or Infinity value (Google
// Benchmark writes them bare) is left out of `values`.
absl::StatusOr<std::vector<BenchRun>> ParseBenchmarkReport(
    const std::string& json);

// The run whose name is `prefix` or starts with "prefix/"; nullptr if none.
const BenchRun* FindRun(const std::vector<BenchRun>& runs,
                        const std::string& prefix);

// One line of the summary table.
struct TargetRow {
  std::string what;
  std::optional<double> measured;  // empty: not measured (a run failed)
  enum class Kind { kAtMost, kAtLeast, kEqual } kind = Kind::kAtMost;
  double target = 0;                // kAtMost, kAtLeast: the bound
  std::optional<double> reference;  // kEqual: the value it must equal
  std::string note;
};

// measured / target for kAtMost and kAtLeast, measured / reference for
// kEqual; nullopt when either is missing or the divisor is 0.
std::optional<double> RatioToTarget(const TargetRow& row);
// Whether the row meets its target (false when not measured).
bool MeetsTarget(const TargetRow& row);

// Every row as a table with a header.
std::string FormatTargetTable(const std::vector<TargetRow>& rows);

// "key=value" lines (FormatSummaryKeyValues of consecutive_models).
std::map<std::string, double> ParseKeyValues(const std::string& text);

}  // namespace graphgc::bench

#endif  // GRAPHGC_BENCH_ALL_LIB_H_
