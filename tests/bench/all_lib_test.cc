#include "bench/all_lib.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace graphgc::bench {
namespace {

constexpr char kReport[] = R"({
  "context": {"date": "2026-11-30", "num_cpus": 2, "caches": [{"type": "Data", "level": 1}],
              "library_build_type": "release", "json_escape": "a\"b\\c\u0041"},
  "benchmarks": [
    {"name": "BM_Collect/1000000/50/iterations:3/manual_time", "run_type": "iteration",
     "iterations": 3, "real_time": 1.5e+01, "cpu_time": 14.0, "time_unit": "ms",
     "ns_per_node": 15.2},
    {"name": "BM_HandleCopyDestroy", "run_type": "iteration", "iterations": 1000,
     "real_time": 3.25, "cpu_time": 3.2, "time_unit": "ns"},
    {"name": "BM_HandleCopyDestroy_mean", "run_type": "aggregate", "real_time": 99,
     "time_unit": "ns"},
    {"name": "BM_Broken", "run_type": "iteration", "error_occurred": true,
     "error_message": "x", "iterations": 0, "real_time": 0, "time_unit": "ns"}
  ]
})";

TEST(ParseBenchmarkReport, RejectsMalformedJsonNamingTheByte) {
  for (const char* bad :
       {"", "{", "[1,]", "{\"a\" 1}", "\"open", "[1] 2", "tru"}) {
    absl::StatusOr<std::vector<BenchRun>> runs = ParseBenchmarkReport(bad);
    EXPECT_EQ(runs.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(runs.status().message(), "byte")) << bad;
  }
}

TEST(ParseBenchmarkReport, RefusesAReportWithoutABenchmarksArray) {
  for (const char* bad : {"{}", "[]", "{\"benchmarks\": 3}"}) {
    EXPECT_EQ(ParseBenchmarkReport(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ParseBenchmarkReport, LeavesOutBareNanAndInfinityCounters) {
  absl::StatusOr<std::vector<BenchRun>> runs = ParseBenchmarkReport(R"({
    "benchmarks": [{"name": "BM_X", "run_type": "iteration", "real_time": 2,
                    "time_unit": "us", "ratio": NaN, "big": Infinity,
                    "small": -Infinity, "note": "NaN stays \" NaN"}]})");
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 1u);
  const BenchRun& run = (*runs)[0];
  EXPECT_EQ(run.values.at("real_time"), 2000);
  EXPECT_EQ(run.values.count("ratio"), 0u);
  EXPECT_EQ(run.values.count("big"), 0u);
  EXPECT_EQ(run.values.count("small"), 0u);
}

TEST(ParseBenchmarkReport, KeepsIterationRunsInNanoseconds) {
  absl::StatusOr<std::vector<BenchRun>> runs = ParseBenchmarkReport(kReport);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);  // the aggregate is skipped
  const BenchRun* collect = FindRun(*runs, "BM_Collect/1000000/50");
  ASSERT_NE(collect, nullptr);
  EXPECT_EQ(collect->values.at("real_time"), 15e6);
  EXPECT_EQ(collect->values.at("ns_per_node"), 15.2);
  const BenchRun* handle = FindRun(*runs, "BM_HandleCopyDestroy");
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(handle->values.at("real_time"), 3.25);
  EXPECT_EQ(FindRun(*runs, "BM_Collect/1000000/5"),
            nullptr);                               // whole parts only
  EXPECT_EQ(FindRun(*runs, "BM_Broken"), nullptr);  // failed runs
  EXPECT_FALSE(ParseBenchmarkReport("{}").ok());
}

TEST(TargetRow, RatioAndVerdict) {
  TargetRow at_most{.what = "x", .measured = 15, .target = 20};
  EXPECT_EQ(RatioToTarget(at_most), 0.75);
  EXPECT_TRUE(MeetsTarget(at_most));
  at_most.measured = 25;
  EXPECT_FALSE(MeetsTarget(at_most));
  TargetRow equal{.what = "y",
                  .measured = 7,
                  .kind = TargetRow::Kind::kEqual,
                  .reference = 7};
  EXPECT_EQ(RatioToTarget(equal), 1.0);
  EXPECT_TRUE(MeetsTarget(equal));
  equal.reference = 8;
  EXPECT_FALSE(MeetsTarget(equal));
  TargetRow missing{.what = "z", .target = 1};
  EXPECT_FALSE(RatioToTarget(missing).has_value());
  EXPECT_FALSE(MeetsTarget(missing));
  const std::string table = FormatTargetTable({at_most, equal, missing});
  EXPECT_TRUE(absl::StrContains(table, "<= 20.000")) << table;
  EXPECT_TRUE(absl::StrContains(table, "== 8.000")) << table;
  EXPECT_TRUE(absl::StrContains(table, "not measured")) << table;
}

TEST(TargetRow, AtLeastIsMetFromTheBoundUp) {
  TargetRow rate{.what = "nodes/s",
                 .measured = 4e6,
                 .kind = TargetRow::Kind::kAtLeast,
                 .target = 5e6};
  EXPECT_EQ(RatioToTarget(rate), 0.8);
  EXPECT_FALSE(MeetsTarget(rate));
  rate.measured = 5e6;
  EXPECT_TRUE(MeetsTarget(rate));
  rate.measured = 6e6;
  EXPECT_TRUE(MeetsTarget(rate));
  const std::string table = FormatTargetTable({rate});
  EXPECT_TRUE(absl::StrContains(table, ">= 5e+06")) << table;
  EXPECT_TRUE(absl::StrContains(table, "yes")) << table;
}

TEST(ParseKeyValues, ReadsNumbersSkipsJunk) {
  auto kv = ParseKeyValues("a=1.5\nnonsense\nb=2e3\nc=x\n");
  EXPECT_EQ(kv.size(), 2u);
  EXPECT_EQ(kv["a"], 1.5);
  EXPECT_EQ(kv["b"], 2000);
}

}  // namespace
}  // namespace graphgc::bench
