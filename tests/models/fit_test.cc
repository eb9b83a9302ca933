// models/fit.h: Keras's validation_split (FitOptions::validation_split,
// SplitForValidation), through Sequential::Fit and directly.
#include "models/fit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace {

using models_internal::SplitForValidation;

bool Mentions(const absl::Status& s, const std::string& text) {
  return s.message().find(text) != absl::string_view::npos;
}

// n samples of 4 features in [0, 1), labels in [0, 3); x and y are also
// returned cut to their first `first` rows.
struct Data {
  Tensor x, y, x_first, y_first, x_last, y_last;
};

Data MakeData(int64_t n, int64_t first, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  std::uniform_int_distribution<int32_t> label(0, 2);
  std::vector<float> xs(n * 4);
  std::vector<int32_t> ys(n);
  for (float& v : xs) v = u(rng);
  for (int32_t& v : ys) v = label(rng);
  auto floats = [](int64_t rows, std::vector<float> v) {
    return Tensor::FromData<float>({rows, 4}, v).value();
  };
  auto ints = [](std::vector<int32_t> v) {
    return Tensor::FromData<int32_t>({static_cast<int64_t>(v.size())}, v)
        .value();
  };
  return {floats(n, xs),
          ints(ys),
          floats(first, {xs.begin(), xs.begin() + first * 4}),
          ints({ys.begin(), ys.begin() + first}),
          floats(n - first, {xs.begin() + first * 4, xs.end()}),
          ints({ys.begin() + first, ys.end()})};
}

bool SameWeights(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto x = a[i].data<float>(), y = b[i].data<float>();
    if (x.size() != y.size() || !std::equal(x.begin(), x.end(), y.begin())) {
      return false;
    }
  }
  return true;
}

class ValidationSplitTest : public ::testing::Test {
 protected:
  // Input(4) -> Dense(8, relu) -> Dense(3, softmax), fixed seeds, Adam,
  // accuracy.
  Sequential Model() {
    Sequential m = Sequential::Create(
                       {layers::Input({4}),
                        layers::Dense(8, {.activation = "relu", .seed = 1}),
                        layers::Dense(3, {.activation = "softmax", .seed = 2})},
                       {.graph = &g_})
                       .value();
    EXPECT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                           .loss = losses::SparseCategoricalCrossentropy(),
                           .metrics = {"accuracy"}})
                    .ok());
    return m;
  }
  Graph g_;
};

TEST(SplitForValidation, SplitsAtKerasRowInDoublePrecision) {
  // floor(10 * (1 - 0.1)) is 9 in double (8 had 0.1 been a float).
  EXPECT_EQ(SplitForValidation(10, 0.1, "fit").value(), 9);
  EXPECT_EQ(SplitForValidation(512, 0.1, "fit").value(), 460);
  EXPECT_EQ(SplitForValidation(100, 0.25, "fit").value(), 75);
}

TEST(SplitForValidation, ZeroMeansNoSplit) {
  EXPECT_EQ(SplitForValidation(7, 0.0, "fit").value(), 7);
}

TEST(SplitForValidation, RefusesAnEmptySideWithKerasMessage) {
  absl::StatusOr<int64_t> s = SplitForValidation(1, 0.5, "Fit of 'm'");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(
      s.status(),
      "Fit of 'm': Training data contains 1 samples, which is not "
      "sufficient to split it into a validation and training set as "
      "specified by `validation_split=0.5`. Either provide more data, or a "
      "different value for the `validation_split` argument."))
      << s.status();
  // 1 - 1e-17 is 1 in double: nothing is held out.
  EXPECT_TRUE(Mentions(SplitForValidation(10, 1e-17, "fit").status(),
                       "`validation_split=1e-17`"));
  EXPECT_TRUE(Mentions(SplitForValidation(10, 1.0, "fit").status(),
                       "`validation_split=1.0`"));
}

TEST(SplitForValidation, RefusesValuesOutsideTheUnitInterval) {
  for (double v : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity()}) {
    absl::Status s = SplitForValidation(100, v, "fit").status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << v;
    EXPECT_TRUE(Mentions(s, "fit: validation_split must be in [0, 1), got "))
        << s;
  }
  EXPECT_TRUE(
      Mentions(SplitForValidation(100, -0.1, "fit").status(), "got -0.1"));
  EXPECT_TRUE(Mentions(
      SplitForValidation(100, std::numeric_limits<double>::quiet_NaN(), "fit")
          .status(),
      "got nan"));
}

TEST_F(ValidationSplitTest, TrainsOnTheFirstRowsOnly) {
  // 100 * (1 - 0.2): the first 80 rows train, shuffled as a fit of those
  // 80 rows alone is.
  Data d = MakeData(100, 80, 1);
  Sequential split = Model();
  Sequential first = Model();
  ASSERT_TRUE(
      split.Fit(d.x, d.y, {.epochs = 2, .verbose = 0, .validation_split = 0.2})
          .ok());
  ASSERT_TRUE(
      first.Fit(d.x_first, d.y_first, {.epochs = 2, .verbose = 0}).ok());
  EXPECT_TRUE(SameWeights(split.GetWeights(), first.GetWeights()));
}

TEST_F(ValidationSplitTest, ValidatesOnTheLastRowsAfterEachEpoch) {
  Data d = MakeData(100, 80, 2);
  Sequential m = Model();
  History h =
      m.Fit(d.x, d.y, {.epochs = 3, .verbose = 0, .validation_split = 0.2})
          .value();
  ASSERT_EQ(h.values("val_loss").size(), 3u);
  ASSERT_EQ(h.values("val_accuracy").size(), 3u);
  // The last epoch's validation ran on the weights the fit ended with.
  std::map<std::string, float> last = m.Evaluate(d.x_last, d.y_last).value();
  EXPECT_FLOAT_EQ(h.values("val_loss").back(), last.at("loss"));
  EXPECT_FLOAT_EQ(h.values("val_accuracy").back(), last.at("accuracy"));
}

TEST_F(ValidationSplitTest, HistoryHoldsEveryMetricByItsKerasName) {
  Data d = MakeData(100, 80, 3);
  Sequential m = Sequential::Create(
                     {layers::Input({4}),
                      layers::Dense(3, {.activation = "softmax", .seed = 2})},
                     {.graph = &g_})
                     .value();
  ASSERT_TRUE(
      m.Compile(
           {.optimizer = optimizers::Adam(),
            .loss = losses::SparseCategoricalCrossentropy(),
            .metrics = {"acc", "sparse_categorical_crossentropy"},
            .configured_metrics =
                {Metric{.kind = "SparseTopKCategoricalAccuracy", .k = 2},
                 Metric{.kind = "sparse_categorical_accuracy", .name = "sca"}}})
          .ok());
  History h =
      m.Fit(d.x, d.y, {.epochs = 2, .verbose = 0, .validation_split = 0.2})
          .value();
  std::vector<std::string> keys;
  for (const auto& [key, values] : h.history) {
    keys.push_back(key);
    EXPECT_EQ(values.size(), 2u) << key;
  }
  EXPECT_EQ(keys,
            (std::vector<std::string>{
                "acc", "loss", "sca", "sparse_categorical_crossentropy",
                "sparse_top_k_categorical_accuracy", "val_acc", "val_loss",
                "val_sca", "val_sparse_categorical_crossentropy",
                "val_sparse_top_k_categorical_accuracy"}));
  // The metric equal to the loss, validated on the fit's last weights.
  std::map<std::string, float> last = m.Evaluate(d.x_last, d.y_last).value();
  EXPECT_NEAR(h.values("val_sparse_categorical_crossentropy").back(),
              last.at("loss"), 1e-5);
  EXPECT_FLOAT_EQ(h.values("val_acc").back(), last.at("sca"));
}

TEST_F(ValidationSplitTest, CallbacksSeeTheTrainingSamplesOnly) {
  Data d = MakeData(100, 80, 3);
  struct Watch : Callback {
    TrainInfo info;
    std::vector<float> sizes;
    absl::Status OnTrainBegin(const Sequential&, const TrainInfo& i) override {
      info = i;
      return absl::OkStatus();
    }
    absl::Status OnBatchEnd(int64_t, const Logs& logs) override {
      sizes.push_back(logs.at("size"));
      return absl::OkStatus();
    }
  };
  auto watch = std::make_shared<Watch>();
  Sequential m = Model();
  ASSERT_TRUE(
      m.Fit(d.x, d.y,
            {.verbose = 0, .callbacks = {watch}, .validation_split = 0.2})
          .ok());
  EXPECT_EQ(watch->info.samples, 80);
  EXPECT_EQ(watch->info.steps_per_epoch, 3);
  EXPECT_TRUE(watch->info.has_validation);
  EXPECT_EQ(watch->sizes, (std::vector<float>{32, 32, 16}));
}

TEST_F(ValidationSplitTest, ValidationDataOverridesTheSplit) {
  Data d = MakeData(100, 80, 4);
  Data v = MakeData(30, 30, 5);
  Sequential both = Model();
  Sequential data_only = Model();
  History h = both.Fit(d.x, d.y,
                       {.verbose = 0,
                        .validation_data = std::make_pair(v.x, v.y),
                        .validation_split = 0.2})
                  .value();
  ASSERT_TRUE(
      data_only
          .Fit(d.x, d.y,
               {.verbose = 0, .validation_data = std::make_pair(v.x, v.y)})
          .ok());
  EXPECT_TRUE(SameWeights(both.GetWeights(), data_only.GetWeights()));
  EXPECT_FLOAT_EQ(h.values("val_loss").back(),
                  both.Evaluate(v.x, v.y).value().at("loss"));
}

TEST_F(ValidationSplitTest, BadSplitFailsTheFitBeforeAnyStep) {
  Data d = MakeData(1, 1, 6);
  Sequential m = Model();
  std::vector<Tensor> before = m.GetWeights();
  absl::StatusOr<History> h =
      m.Fit(d.x, d.y, {.verbose = 0, .validation_split = 0.1});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(h.status(), "Training data contains 1 samples"))
      << h.status();
  EXPECT_TRUE(Mentions(h.status(), m.name())) << h.status();
  EXPECT_TRUE(SameWeights(before, m.GetWeights()));
}

}  // namespace
}  // namespace graphgc
