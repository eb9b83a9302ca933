#include "tools/consecutive_models_lib.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "tests/testing/temp_path.h"

namespace graphgc::consecutive {
namespace {

namespace fs = std::filesystem;

class ConsecutiveModelsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = TestTempPath(); }

  // A small run on its own graph: 200 samples keep it fast.
  RunResult RunOn(Graph& g, int models, bool gc) {
    Options options;
    options.models = models;
    options.logdir = dir_;
    options.gc = gc;
    options.samples = 200;
    options.graph = &g;
    absl::StatusOr<RunResult> r = RunConsecutiveModels(options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : RunResult{};
  }

  std::string dir_;
};

TEST_F(ConsecutiveModelsTest, GcOnRowsExportTheSameGraphAndStayBounded) {
  Graph g;
  // Collect at every safe point that has garbage, so a few models suffice.
  g.set_gc_policy({.automatic = true, .growth_ratio = 0, .min_new_nodes = 1});
  const RunResult r = RunOn(g, 4, /*gc=*/true);
  ASSERT_EQ(r.rows.size(), 4u);
  for (const RunRow& row : r.rows) {
    EXPECT_GT(row.nodes_exported, 0);
    EXPECT_EQ(row.nodes_exported, r.rows[0].nodes_exported) << row.run;
    EXPECT_GT(row.graph_bytes, 0);
    EXPECT_GT(row.event_bytes, row.graph_bytes);
    EXPECT_GT(row.us_per_sample, 0);
    EXPECT_GT(row.rss_kb, 0);
    // Only this model and what the last collection left of the previous.
    EXPECT_LE(row.live_nodes, 2 * r.rows[0].live_nodes) << row.run;
    EXPECT_TRUE(fs::exists(absl::StrCat(dir_, "/", row.run, "/train")));
  }
  EXPECT_GT(r.gc.collections, 0);
  EXPECT_GT(r.gc.swept_total, 0);
  EXPECT_EQ(r.rows.back().collections, r.gc.collections);
}

TEST_F(ConsecutiveModelsTest, GcOffLiveNodesGrowLinearly) {
  Graph g;
  const RunResult r = RunOn(g, 4, /*gc=*/false);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_FALSE(g.collector().policy().automatic);
  EXPECT_EQ(r.gc.collections, 0);
  const int64_t per_model = r.rows[1].live_nodes - r.rows[0].live_nodes;
  EXPECT_GT(per_model, 0);
  for (size_t i = 1; i < r.rows.size(); ++i) {
    EXPECT_EQ(r.rows[i].live_nodes - r.rows[i - 1].live_nodes, per_model) << i;
    // Exports hold only what each model reaches, even without collection.
    EXPECT_EQ(r.rows[i].nodes_exported, r.rows[0].nodes_exported) << i;
  }
}

TEST_F(ConsecutiveModelsTest, LeakReportNamesTheLastModel) {
  Graph g;
  Options options;
  options.models = 2;
  options.logdir = dir_;
  options.samples = 64;
  options.leak_report = true;
  options.graph = &g;
  absl::StatusOr<RunResult> r = RunConsecutiveModels(options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(absl::StrContains(r->leak_report, "Leak report"))
      << r->leak_report;
  EXPECT_TRUE(absl::StrContains(r->leak_report, "Sequential '"))
      << r->leak_report;
  EXPECT_TRUE(absl::StrContains(r->leak_report, "ExplainRetention"))
      << r->leak_report;
}

TEST_F(ConsecutiveModelsTest, RejectsBadOptions) {
  Graph g;
  Options options;
  options.models = 0;
  options.graph = &g;
  EXPECT_FALSE(RunConsecutiveModels(options).ok());
  options.models = 1;
  options.batch_size = 0;
  EXPECT_FALSE(RunConsecutiveModels(options).ok());
  EXPECT_EQ(g.num_nodes(), 0);
}

TEST_F(ConsecutiveModelsTest, RefusesAnEmptyLogdirInsteadOfWritingAtTheRoot) {
  Graph g;
  Options options;
  options.models = 1;
  options.logdir = "";
  options.graph = &g;
  absl::StatusOr<RunResult> r = RunConsecutiveModels(options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
      << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "--logdir"))
      << r.status();
  EXPECT_EQ(g.num_nodes(), 0);
}

TEST(ConsecutiveModelsFormatTest, RowsToShowAllForSmallRuns) {
  EXPECT_EQ(RowsToShow(3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(RowsToShow(30).size(), 30u);
  EXPECT_TRUE(RowsToShow(0).empty());
}

TEST(ConsecutiveModelsFormatTest, RowsToShowFirstTenEveryKthAndLast) {
  const std::vector<int> rows = RowsToShow(200);
  ASSERT_GT(rows.size(), 12u);
  EXPECT_LE(rows.size(), 32u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(rows[i], i);
  EXPECT_EQ(rows.back(), 199);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_LT(rows[i - 1], rows[i]);
  const int k = rows[11] - rows[10];
  for (size_t i = 11; i + 1 < rows.size(); ++i) {
    EXPECT_EQ(rows[i] - rows[i - 1], k) << i;
  }
}

TEST(ConsecutiveModelsFormatTest, MedianAndRatio) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Ratio(3, 2), 1.5);
  EXPECT_EQ(Ratio(3, 0), 0);
}

TEST(ConsecutiveModelsFormatTest, SummaryUsesMediansOfTenAndLastOverFirst) {
  RunResult result;
  for (int i = 0; i < 40; ++i) {
    RunRow row;
    row.run = i;
    row.event_bytes = 1000 + i;
    row.graph_bytes = 500;
    row.nodes_exported = 90;
    row.live_nodes = 100 + (i % 3);
    // An outlier in each window must not move the medians.
    row.us_per_sample = i < 10 ? 1.0 : 2.0;
    if (i == 0 || i == 39) row.us_per_sample = 100;
    row.rss_kb = 10000 + 100 * i;
    result.rows.push_back(row);
  }
  result.gc.collections = 7;
  const Summary s = Summarize(result);
  EXPECT_EQ(s.models, 40);
  EXPECT_EQ(s.window, 10);
  EXPECT_EQ(s.us_per_sample_first, 1.0);
  EXPECT_EQ(s.us_per_sample_last, 2.0);
  EXPECT_EQ(s.us_per_sample_ratio, 2.0);
  EXPECT_DOUBLE_EQ(s.event_bytes_ratio, 1039.0 / 1000.0);
  EXPECT_EQ(s.graph_bytes_ratio, 1.0);
  EXPECT_EQ(s.nodes_exported_ratio, 1.0);
  EXPECT_EQ(s.rss_first_kb, 10000);
  EXPECT_EQ(s.rss_last_kb, 13900);
  EXPECT_DOUBLE_EQ(s.rss_ratio, 1.39);
  EXPECT_EQ(s.live_nodes_max, 102);

  const std::string table = FormatTable(result.rows);
  EXPECT_TRUE(absl::StrContains(table, "live nodes"));
  EXPECT_FALSE(absl::StrContains(table, "..."));  // 40 rows: k = 1
  result.rows.resize(200, result.rows.back());
  EXPECT_TRUE(absl::StrContains(FormatTable(result.rows), "  ...\n"));
  const std::string text = FormatSummary(s);
  EXPECT_TRUE(absl::StrContains(text, "median")) << text;
  EXPECT_TRUE(absl::StrContains(text, "7 collections")) << text;
  const std::string kv = FormatSummaryKeyValues(s);
  EXPECT_TRUE(absl::StrContains(kv, "us_per_sample_ratio=2\n")) << kv;
  EXPECT_TRUE(absl::StrContains(kv, "rss_ratio=1.39\n")) << kv;
}

}  // namespace
}  // namespace graphgc::consecutive
