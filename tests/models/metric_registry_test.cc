#include "models/metric_registry.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/metrics.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {
namespace {

using Rows = std::vector<std::vector<double>>;

bool Mentions(const absl::Status& s, const std::string& text) {
  return s.message().find(text) != absl::string_view::npos;
}

Tensor FloatRows(const Rows& rows) {
  std::vector<float> flat;
  for (const auto& r : rows) {
    for (double v : r) flat.push_back(static_cast<float>(v));
  }
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t u = static_cast<int64_t>(rows[0].size());
  return *Tensor::FromData<float>({n, u}, flat);
}

Tensor Ids(const std::vector<int32_t>& ids) {
  return *Tensor::FromData<int32_t>({static_cast<int64_t>(ids.size())}, ids);
}

// One batch: predictions and labels (float rows, or class ids when
// `ids` is not empty).
struct Batch {
  Rows pred;
  Rows truth;
  std::vector<int32_t> ids;
};

// Each metric's value over `batches` (the epoch's), by its name, from
// BuildMetrics' nodes and MetricTotals.
absl::StatusOr<std::map<std::string, float>> EpochValues(
    const std::vector<Metric>& metrics, const std::vector<Batch>& batches) {
  Graph g;
  const bool sparse = !batches[0].ids.empty();
  const int64_t units = static_cast<int64_t>(batches[0].pred[0].size());
  Output y = *ops::Placeholder(g, DT_FLOAT, {-1, units});
  Output labels = sparse ? *ops::Placeholder(g, DT_INT32, {-1})
                         : *ops::Placeholder(g, DT_FLOAT, {-1, units});
  absl::StatusOr<std::vector<MetricNode>> nodes = BuildMetrics(
      metrics,
      {.output = y, .units = units, .labels = labels, .sparse_labels = sparse},
      "m");
  if (!nodes.ok()) return nodes.status();
  std::vector<Output> fetches;
  MetricTotals::AppendFetches(*nodes, fetches);
  MetricTotals totals(&*nodes);
  Session session(g);
  for (const Batch& b : batches) {
    absl::StatusOr<std::vector<Tensor>> out =
        session.Run({{y, FloatRows(b.pred)},
                     {labels, sparse ? Ids(b.ids) : FloatRows(b.truth)}},
                    fetches);
    if (!out.ok()) return out.status();
    totals.Add(*out, 0);
  }
  std::map<std::string, float> logs;
  totals.Results(logs);
  return logs;
}

float EpochValue(const Metric& metric, const std::vector<Batch>& batches) {
  absl::StatusOr<std::map<std::string, float>> logs =
      EpochValues({metric}, batches);
  EXPECT_TRUE(logs.ok()) << logs.status();
  if (!logs.ok() || logs->size() != 1) return NAN;
  return logs->begin()->second;
}

float EpochValue(const std::string& name, const std::vector<Batch>& batches) {
  return EpochValue(Metric{.kind = name}, batches);
}

// Two batches of 3 and 1 samples, 2 units: a mean over batches would weigh
// the last sample 3 times over.
const std::vector<Batch>& Regression() {
  static const std::vector<Batch> b = {
      {.pred = {{0.5, 2.0}, {1.5, 0.2}, {3.0, 1.0}},
       .truth = {{1.0, 1.0}, {2.0, 0.5}, {2.0, 2.0}}},
      {.pred = {{4.0, 0.1}}, .truth = {{1.0, 3.0}}}};
  return b;
}

// The sample-weighted mean over Regression()'s samples of `f(t, p)`.
double RegressionMean(double (*f)(const std::vector<double>&,
                                  const std::vector<double>&)) {
  double sum = 0;
  int n = 0;
  for (const Batch& b : Regression()) {
    for (size_t i = 0; i < b.pred.size(); ++i, ++n)
      sum += f(b.truth[i], b.pred[i]);
  }
  return sum / n;
}

double Mse(const std::vector<double>& t, const std::vector<double>& p) {
  return ((p[0] - t[0]) * (p[0] - t[0]) + (p[1] - t[1]) * (p[1] - t[1])) / 2;
}
double Mae(const std::vector<double>& t, const std::vector<double>& p) {
  return (std::fabs(p[0] - t[0]) + std::fabs(p[1] - t[1])) / 2;
}
double Mape(const std::vector<double>& t, const std::vector<double>& p) {
  return 100 *
         (std::fabs((t[0] - p[0]) / t[0]) + std::fabs((t[1] - p[1]) / t[1])) /
         2;
}
double Msle(const std::vector<double>& t, const std::vector<double>& p) {
  auto d = [&](int i) { return std::log1p(p[i]) - std::log1p(t[i]); };
  return (d(0) * d(0) + d(1) * d(1)) / 2;
}
double LogCosh(const std::vector<double>& t, const std::vector<double>& p) {
  return (std::log(std::cosh(p[0] - t[0])) + std::log(std::cosh(p[1] - t[1]))) /
         2;
}
double Cosine(const std::vector<double>& t, const std::vector<double>& p) {
  return (t[0] * p[0] + t[1] * p[1]) /
         (std::hypot(t[0], t[1]) * std::hypot(p[0], p[1]));
}

TEST(MeanMetrics, WeighSamplesNotBatches) {
  EXPECT_NEAR(EpochValue("mean_squared_error", Regression()),
              RegressionMean(Mse), 1e-5);
  EXPECT_NEAR(EpochValue("mae", Regression()), RegressionMean(Mae), 1e-5);
  EXPECT_NEAR(EpochValue("mape", Regression()), RegressionMean(Mape), 1e-3);
  EXPECT_NEAR(EpochValue("msle", Regression()), RegressionMean(Msle), 1e-5);
  EXPECT_NEAR(EpochValue("log_cosh_error", Regression()),
              RegressionMean(LogCosh), 1e-5);
  EXPECT_NEAR(EpochValue("cosine_similarity", Regression()),
              RegressionMean(Cosine), 1e-5);
}

TEST(RootMeanSquaredError, IsTheRootOfTheEpochsMeanSquaredError) {
  // Not the mean of the batches' roots.
  EXPECT_NEAR(EpochValue("root_mean_squared_error", Regression()),
              std::sqrt(RegressionMean(Mse)), 1e-5);
}

TEST(Crossentropies, AreTheLossesPerSampleMeans) {
  const std::vector<Batch> binary = {
      {.pred = {{0.9}, {0.2}, {0.6}}, .truth = {{1}, {0}, {0}}},
      {.pred = {{0.3}}, .truth = {{1}}}};
  const double bce =
      -(std::log(0.9) + std::log(0.8) + std::log(0.4) + std::log(0.3)) / 4;
  EXPECT_NEAR(EpochValue("binary_crossentropy", binary), bce, 1e-5);
  const std::vector<Batch> cat = {
      {.pred = {{0.7, 0.2, 0.1}, {0.1, 0.8, 0.1}},
       .truth = {{1, 0, 0}, {0, 0, 1}}},
      {.pred = {{0.25, 0.25, 0.5}}, .truth = {{0, 0, 1}}}};
  const double cce = -(std::log(0.7) + std::log(0.1) + std::log(0.5)) / 3;
  EXPECT_NEAR(EpochValue("categorical_crossentropy", cat), cce, 1e-5);
  std::vector<Batch> sparse = cat;
  sparse[0].ids = {0, 2};
  sparse[1].ids = {2};
  EXPECT_NEAR(EpochValue("sparse_categorical_crossentropy", sparse), cce, 1e-5);
}

// 3 classes; batch 1 right on 2 of 3 samples, batch 2 wrong on its one.
std::vector<Batch> Classes() {
  return {{.pred = {{0.7, 0.2, 0.1}, {0.1, 0.3, 0.6}, {0.5, 0.4, 0.1}},
           .truth = {{1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
           .ids = {0, 2, 1}},
          {.pred = {{0.2, 0.5, 0.3}}, .truth = {{0, 0, 1}}, .ids = {2}}};
}

TEST(Accuracies, AreTheFractionOfSamplesRight) {
  std::vector<Batch> dense = Classes();
  for (Batch& b : dense) b.ids.clear();
  EXPECT_NEAR(EpochValue("categorical_accuracy", dense), 0.5, 1e-6);
  EXPECT_NEAR(EpochValue("sparse_categorical_accuracy", Classes()), 0.5, 1e-6);
  const std::vector<Batch> binary = {
      {.pred = {{0.9}, {0.2}, {0.6}}, .truth = {{1}, {0}, {0}}},
      {.pred = {{0.3}}, .truth = {{1}}}};
  EXPECT_NEAR(EpochValue("binary_accuracy", binary), 0.5, 1e-6);
  EXPECT_NEAR(
      EpochValue(Metric{.kind = "BinaryAccuracy", .threshold = 0.25f}, binary),
      0.75, 1e-6);
}

TEST(Accuracy, ResolvesFromTheLabelsAndTheOutput) {
  // Class ids: sparse categorical; rows of one unit: binary (0.9 > 0.5 is
  // class 1, but argmax of one unit is always 0); wider rows: categorical.
  EXPECT_NEAR(EpochValue("accuracy", Classes()), 0.5, 1e-6);
  const std::vector<Batch> binary = {
      {.pred = {{0.9}, {0.2}}, .truth = {{1}, {1}}}};
  EXPECT_NEAR(EpochValue("acc", binary), 0.5, 1e-6);
  std::vector<Batch> dense = Classes();
  for (Batch& b : dense) b.ids.clear();
  EXPECT_NEAR(EpochValue("accuracy", dense), 0.5, 1e-6);
}

TEST(TopKAccuracies, CountTheLabelAmongTheKLargest) {
  // k = 2: batch 1's third sample (0.4 is second) and batch 2's (0.3 is
  // second) are in; all 4 of 4.
  std::vector<Batch> dense = Classes();
  for (Batch& b : dense) b.ids.clear();
  EXPECT_NEAR(
      EpochValue(Metric{.kind = "top_k_categorical_accuracy", .k = 2}, dense),
      1.0, 1e-6);
  // k = 1 is categorical accuracy.
  EXPECT_NEAR(
      EpochValue(Metric{.kind = "TopKCategoricalAccuracy", .k = 1}, dense), 0.5,
      1e-6);
  EXPECT_NEAR(
      EpochValue(Metric{.kind = "sparse_top_k_categorical_accuracy", .k = 1},
                 Classes()),
      0.5, 1e-6);
  // The default k = 5 holds every one of 3 classes.
  EXPECT_NEAR(EpochValue("sparse_top_k_categorical_accuracy", Classes()), 1.0,
              1e-6);
}

TEST(TopKAccuracies, CountTiesAtTheBoundaryIn) {
  const std::vector<Batch> tie = {
      {.pred = {{0.5, 0.25, 0.25}}, .truth = {{0, 0, 1}}, .ids = {2}}};
  EXPECT_NEAR(
      EpochValue(Metric{.kind = "sparse_top_k_categorical_accuracy", .k = 2},
                 tie),
      1.0, 1e-6);
}

// Batch 1: tp 1 (0.9), fp 1 (0.8), tn 1 (0.2); batch 2: tp 1 (0.7),
// tn 1 (0.1).
std::vector<Batch> Scores() {
  return {{.pred = {{0.9}, {0.8}, {0.2}}, .truth = {{1}, {0}, {0}}},
          {.pred = {{0.7}, {0.1}}, .truth = {{1}, {0}}}};
}

TEST(Precision, IsFromTheEpochsCountsNotTheBatchesMean) {
  // tp 2, fp 1: 2/3; the batches' precisions 1/2 and 1 average 3/4.
  EXPECT_NEAR(EpochValue("precision", Scores()), 2.0 / 3, 1e-6);
  // Above 0.85 only 0.9 is positive: 1/1.
  EXPECT_NEAR(
      EpochValue(Metric{.kind = "Precision", .threshold = 0.85f}, Scores()),
      1.0, 1e-6);
}

TEST(Recall, IsFromTheEpochsCountsNotTheBatchesMean) {
  // Batch 1: tp 1, fn 1 (0.3); batch 2: tp 1. 2/3, not (1/2 + 1) / 2.
  const std::vector<Batch> b = {{.pred = {{0.9}, {0.3}}, .truth = {{1}, {1}}},
                                {.pred = {{0.8}}, .truth = {{1}}}};
  EXPECT_NEAR(EpochValue("recall", b), 2.0 / 3, 1e-6);
}

TEST(Precision, IsZeroWithoutPredictedPositives) {
  const std::vector<Batch> b = {{.pred = {{0.1}}, .truth = {{1}}}};
  EXPECT_EQ(EpochValue("precision", b), 0.f);
}

TEST(Auc, IsTheEpochsRocArea) {
  // Positives 0.9, 0.7; negatives 0.8, 0.2, 0.1: 5 of 6 pairs ordered
  // right. Each batch alone is perfectly ordered (area 1).
  EXPECT_NEAR(EpochValue("auc", Scores()), 5.0 / 6, 1e-5);
  EXPECT_NEAR(EpochValue("AUC", {Scores()[0]}), 1.0, 1e-5);
}

TEST(Auc, InterpolatesBetweenCoarseThresholds) {
  // 3 thresholds (-eps, 0.5, 1 + eps): points (1, 1), (1/3, 1), (0, 0);
  // trapezoids 2/3 * 1 + 1/3 * 1/2.
  EXPECT_NEAR(EpochValue(Metric{.kind = "auc", .num_thresholds = 3}, Scores()),
              2.0 / 3 + 1.0 / 6, 1e-5);
}

TEST(MetricNames, AreTheStringOrTheClassDefault) {
  absl::StatusOr<std::map<std::string, float>> logs = EpochValues(
      CompileMetrics(
          {"mse", "Precision"},
          {Metric{.kind = "AUC"}, Metric{.kind = "MeanAbsoluteError"},
           Metric{.kind = "recall", .name = "my_recall"}}),
      Scores());
  ASSERT_TRUE(logs.ok()) << logs.status();
  std::vector<std::string> names;
  for (const auto& [name, value] : *logs) names.push_back(name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"Precision", "auc", "mean_absolute_error",
                                      "mse", "my_recall"}));
}

TEST(BuildMetrics, RefusesAnUnknownNameListingTheKnown) {
  absl::StatusOr<std::map<std::string, float>> logs =
      EpochValues({Metric{.kind = "f1"}}, Scores());
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(logs.status(), "unknown metric 'f1'"));
  EXPECT_TRUE(Mentions(logs.status(), "precision, recall, auc"));
}

TEST(BuildMetrics, RefusesAnOptionTheMetricDoesNotTake) {
  absl::StatusOr<std::map<std::string, float>> logs =
      EpochValues({Metric{.kind = "precision", .k = 3}}, Scores());
  ASSERT_FALSE(logs.ok());
  EXPECT_TRUE(Mentions(logs.status(), "Precision takes no k"));
}

TEST(BuildMetrics, RefusesOutOfRangeOptions) {
  EXPECT_FALSE(
      EpochValues({Metric{.kind = "top_k_categorical_accuracy", .k = 0}},
                  Scores())
          .ok());
  EXPECT_FALSE(
      EpochValues({Metric{.kind = "recall", .threshold = 1.5f}}, Scores())
          .ok());
  EXPECT_FALSE(
      EpochValues({Metric{.kind = "auc", .num_thresholds = 1}}, Scores()).ok());
}

TEST(BuildMetrics, RefusesLabelsTheMetricDoesNotRead) {
  absl::StatusOr<std::map<std::string, float>> logs =
      EpochValues({Metric{.kind = "mae"}}, Classes());
  ASSERT_FALSE(logs.ok());
  EXPECT_TRUE(Mentions(logs.status(), "but the loss takes class ids"));
  std::vector<Batch> dense = Classes();
  for (Batch& b : dense) b.ids.clear();
  EXPECT_FALSE(
      EpochValues({Metric{.kind = "sparse_categorical_accuracy"}}, dense).ok());
}

TEST(BuildMetrics, RefusesTwoMetricsOfOneName) {
  absl::StatusOr<std::map<std::string, float>> logs =
      EpochValues({Metric{.kind = "precision"},
                   Metric{.kind = "Precision", .threshold = 0.7f}},
                  Scores());
  ASSERT_FALSE(logs.ok());
  EXPECT_TRUE(Mentions(logs.status(), "two metrics are named 'precision'"));
}

TEST(MetricTotals, ResetForgetsTheBatches) {
  Graph g;
  Output y = *ops::Placeholder(g, DT_FLOAT, {-1, 1});
  Output labels = *ops::Placeholder(g, DT_FLOAT, {-1, 1});
  absl::StatusOr<std::vector<MetricNode>> nodes =
      BuildMetrics({Metric{.kind = "precision"}},
                   {.output = y, .units = 1, .labels = labels}, "m");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  std::vector<Output> fetches;
  MetricTotals::AppendFetches(*nodes, fetches);
  MetricTotals totals(&*nodes);
  Session session(g);
  auto run = [&](const Rows& p, const Rows& t) {
    absl::StatusOr<std::vector<Tensor>> out =
        session.Run({{y, FloatRows(p)}, {labels, FloatRows(t)}}, fetches);
    ASSERT_TRUE(out.ok()) << out.status();
    totals.Add(*out, 0);
  };
  run({{0.9}}, {{0}});  // a false positive
  totals.Reset();
  run({{0.9}}, {{1}});
  std::map<std::string, float> logs;
  totals.Results(logs);
  EXPECT_EQ(logs.at("precision"), 1.f);
}

TEST(MetricKinds, ListTheKerasMetricsInOrder) {
  EXPECT_EQ(KnownMetrics(),
            "accuracy, binary_accuracy, categorical_accuracy, "
            "sparse_categorical_accuracy, top_k_categorical_accuracy, "
            "sparse_top_k_categorical_accuracy, mean_squared_error, "
            "mean_absolute_error, mean_absolute_percentage_error, "
            "mean_squared_logarithmic_error, root_mean_squared_error, "
            "cosine_similarity, log_cosh_error, binary_crossentropy, "
            "categorical_crossentropy, sparse_categorical_crossentropy, "
            "precision, recall, auc");
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
