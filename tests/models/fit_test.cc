// models/fit.h: Keras's validation_split (FitOptions::validation_split,
// SplitForValidation), through Sequential::Fit and directly, and fit's other
// Keras arguments (initial_epoch, validation_freq, steps_per_epoch,
// validation_steps, validation_batch_size, sample_weight, class_weight).
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

// Records what a fit hands its callbacks: epoch numbers and batches.
struct EpochWatch : Callback {
  std::vector<int> begun;
  std::vector<int64_t> batches;  // per epoch
  absl::Status OnEpochBegin(int epoch) override {
    begun.push_back(epoch);
    batches.push_back(0);
    return absl::OkStatus();
  }
  absl::Status OnBatchEnd(int64_t, const Logs&) override {
    ++batches.back();
    return absl::OkStatus();
  }
};

using FitArgumentsTest = ValidationSplitTest;

TEST_F(FitArgumentsTest, InitialEpochCountsEpochsFromIt) {
  Data d = MakeData(40, 40, 7);
  auto watch = std::make_shared<EpochWatch>();
  Sequential m = Model();
  History h = m.Fit(d.x, d.y,
                    {.epochs = 5,
                     .verbose = 0,
                     .callbacks = {watch},
                     .initial_epoch = 2})
                  .value();
  EXPECT_EQ(h.epoch, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(watch->begun, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(h.values("loss").size(), 3u);
}

TEST_F(FitArgumentsTest, InitialEpochAtOrPastEpochsTrainsNothing) {
  Data d = MakeData(40, 40, 8);
  Sequential m = Model();
  std::vector<Tensor> before = m.GetWeights();
  History h =
      m.Fit(d.x, d.y, {.epochs = 2, .verbose = 0, .initial_epoch = 2}).value();
  EXPECT_TRUE(h.epoch.empty());
  EXPECT_TRUE(SameWeights(before, m.GetWeights()));
}

TEST_F(FitArgumentsTest, ValidationFreqValidatesEveryNthEpochOnly) {
  Data d = MakeData(100, 80, 9);
  Sequential m = Model();
  History h = m.Fit(d.x, d.y,
                    {.epochs = 5,
                     .verbose = 0,
                     .validation_split = 0.2,
                     .validation_freq = 2})
                  .value();
  EXPECT_EQ(h.values("loss").size(), 5u);
  // Epochs 2 and 4 (Keras counts from 1).
  EXPECT_EQ(h.values("val_loss").size(), 2u);
  EXPECT_EQ(h.values("val_accuracy").size(), 2u);
}

TEST_F(FitArgumentsTest, ValidationEpochsListsTheEpochsToValidate) {
  Data d = MakeData(100, 80, 10);
  Sequential m = Model();
  History h = m.Fit(d.x, d.y,
                    {.epochs = 4,
                     .verbose = 0,
                     .validation_split = 0.2,
                     .validation_epochs = {1, 4}})
                  .value();
  EXPECT_EQ(h.values("val_loss").size(), 2u);
}

TEST_F(FitArgumentsTest, ValidationFreqBelowOneIsRefused) {
  Data d = MakeData(40, 40, 11);
  Sequential m = Model();
  absl::Status s =
      m.Fit(d.x, d.y, {.verbose = 0, .validation_freq = 0}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "validation_freq must be >= 1")) << s;
}

TEST_F(FitArgumentsTest, StepsPerEpochContinuesThePassAndWarnsWhenItRunsOut) {
  // 100 samples in batches of 10: a pass is 10 batches; 3 an epoch.
  Data d = MakeData(100, 100, 12);
  auto watch = std::make_shared<EpochWatch>();
  Sequential m = Model();
  History h = m.Fit(d.x, d.y,
                    {.epochs = 5,
                     .batch_size = 10,
                     .verbose = 0,
                     .callbacks = {watch},
                     .steps_per_epoch = 3})
                  .value();
  EXPECT_EQ(watch->batches, (std::vector<int64_t>{3, 3, 3, 1, 3}));
  ASSERT_EQ(h.warnings.size(), 1u);
  EXPECT_TRUE(Mentions(absl::InvalidArgumentError(h.warnings[0]),
                       "Your input ran out of data; interrupting training."));
}

TEST_F(FitArgumentsTest, StepsPerEpochDividingThePassDoesNotWarn) {
  Data d = MakeData(100, 100, 13);
  Sequential m = Model();
  History h =
      m.Fit(d.x, d.y,
            {.epochs = 4, .batch_size = 10, .verbose = 0, .steps_per_epoch = 5})
          .value();
  EXPECT_TRUE(h.warnings.empty());
}

TEST_F(FitArgumentsTest, ValidationStepsAndBatchSizeValidateOnTheFirstBatches) {
  Data d = MakeData(40, 40, 14);
  Data v = MakeData(30, 10, 15);
  Sequential m = Model();
  History h = m.Fit(d.x, d.y,
                    {.verbose = 0,
                     .validation_data = std::make_pair(v.x, v.y),
                     .validation_steps = 1,
                     .validation_batch_size = 10})
                  .value();
  EXPECT_FLOAT_EQ(h.values("val_loss").back(),
                  m.Evaluate(v.x_first, v.y_first).value().at("loss"));
}

Tensor Filled(int64_t n, float v) {
  return Tensor::FromData<float>({n}, std::vector<float>(n, v)).value();
}

TEST_F(FitArgumentsTest, SampleWeightScalesEachSampleLossOverTheBatchSize) {
  Data d = MakeData(40, 20, 16);
  Sequential m = Model();
  const float plain = m.Evaluate(d.x, d.y).value().at("loss");
  const float first = m.Evaluate(d.x_first, d.y_first).value().at("loss");
  EXPECT_FLOAT_EQ(m.Evaluate(d.x, d.y, Filled(40, 2.f)).value().at("loss"),
                  2 * plain);
  // Keras's sum_over_batch_size: sum(w * loss) / batch size, zero weights
  // counted in the size.
  std::vector<float> w(40, 0.f);
  std::fill(w.begin(), w.begin() + 20, 1.f);
  Tensor half = Tensor::FromData<float>({40}, w).value();
  EXPECT_NEAR(m.Evaluate(d.x, d.y, half, 40).value().at("loss"), first / 2,
              1e-6);
  // Metrics stay unweighted (Keras's `metrics`).
  EXPECT_FLOAT_EQ(m.Evaluate(d.x, d.y, half, 40).value().at("accuracy"),
                  m.Evaluate(d.x, d.y, 40).value().at("accuracy"));
}

TEST_F(FitArgumentsTest, SampleWeightsOfOneTrainAsNoWeights) {
  Data d = MakeData(40, 40, 17);
  Sequential a = Model();
  Sequential b = Model();
  ASSERT_TRUE(a.Fit(d.x, d.y, {.epochs = 2, .verbose = 0}).ok());
  FitOptions o{.epochs = 2, .verbose = 0};
  o.sample_weight = Filled(40, 1.f);
  ASSERT_TRUE(b.Fit(d.x, d.y, o).ok());
  EXPECT_TRUE(SameWeights(a.GetWeights(), b.GetWeights()));
}

TEST_F(FitArgumentsTest, ClassWeightTrainsAsTheSampleWeightsItMakes) {
  Data d = MakeData(40, 40, 18);
  std::vector<float> w;
  for (int32_t label : d.y.data<int32_t>()) {
    w.push_back(label == 0 ? 2.f : label == 2 ? 0.5f : 1.f);
  }
  Sequential a = Model();
  Sequential b = Model();
  FitOptions by_class{.epochs = 2, .verbose = 0};
  by_class.class_weight = {{0, 2.f}, {2, 0.5f}};
  FitOptions by_sample{.epochs = 2, .verbose = 0};
  by_sample.sample_weight = Tensor::FromData<float>({40}, w).value();
  History ha = a.Fit(d.x, d.y, by_class).value();
  History hb = b.Fit(d.x, d.y, by_sample).value();
  EXPECT_TRUE(SameWeights(a.GetWeights(), b.GetWeights()));
  EXPECT_EQ(ha.values("loss"), hb.values("loss"));
  // And differently from no weights.
  Sequential c = Model();
  ASSERT_TRUE(c.Fit(d.x, d.y, {.epochs = 2, .verbose = 0}).ok());
  EXPECT_FALSE(SameWeights(a.GetWeights(), c.GetWeights()));
}

TEST_F(FitArgumentsTest, ClassWeightWithValidationSplitValidatesUnweighted) {
  Data d = MakeData(100, 80, 19);
  Sequential m = Model();
  FitOptions o{.verbose = 0, .validation_split = 0.2};
  o.class_weight = {{0, 5.f}};
  History h = m.Fit(d.x, d.y, o).value();
  EXPECT_FLOAT_EQ(h.values("val_loss").back(),
                  m.Evaluate(d.x_last, d.y_last).value().at("loss"));
}

TEST_F(FitArgumentsTest, SampleWeightWithValidationSplitWeighsTheHeldOutRows) {
  Data d = MakeData(100, 80, 20);
  Sequential m = Model();
  FitOptions o{.verbose = 0, .validation_split = 0.2};
  o.sample_weight = Filled(100, 3.f);
  History h = m.Fit(d.x, d.y, o).value();
  EXPECT_FLOAT_EQ(
      h.values("val_loss").back(),
      m.Evaluate(d.x_last, d.y_last, Filled(20, 3.f)).value().at("loss"));
}

TEST_F(FitArgumentsTest, ClassWeightAndSampleWeightTogetherAreRefused) {
  Data d = MakeData(40, 40, 21);
  Sequential m = Model();
  FitOptions o{.verbose = 0};
  o.class_weight = {{0, 2.f}};
  o.sample_weight = Filled(40, 1.f);
  absl::Status s = m.Fit(d.x, d.y, o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s,
                       "You cannot `class_weight` and `sample_weight` at "
                       "the same time."))
      << s;
}

TEST_F(FitArgumentsTest, SampleWeightOfTheWrongLengthIsRefused) {
  Data d = MakeData(40, 40, 22);
  Sequential m = Model();
  FitOptions o{.verbose = 0};
  o.sample_weight = Filled(39, 1.f);
  absl::Status s = m.Fit(d.x, d.y, o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "sample_weight must be float of shape [40]")) << s;
}

}  // namespace
}  // namespace graphgc
