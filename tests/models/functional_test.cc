// models/functional.h: symbolic values, layer calls on them and Functional
// models built, trained, summarised and collected through the engine.
#include "models/functional.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace {

using ::testing::HasSubstr;

Tensor Floats(TensorShape shape, std::vector<float> v) {
  return Tensor::FromData<float>(shape, v).value();
}

// n samples of `features` values in [-1, 1) and a target: their sum.
std::pair<Tensor, Tensor> SumData(int64_t n, int64_t features, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xs(n * features), ys(n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < features; ++j) {
      xs[i * features + j] = u(rng);
      ys[i] += xs[i * features + j];
    }
  }
  return {Floats({n, features}, xs), Floats({n, 1}, ys)};
}

bool SameWeights(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape()) return false;
    auto x = a[i].data<float>(), y = b[i].data<float>();
    if (!std::equal(x.begin(), x.end(), y.begin())) return false;
  }
  return true;
}

class FunctionalTest : public ::testing::Test {
 protected:
  // Input(4) -> Dense(4, relu) -> Add with the input -> Dense(1).
  Functional Residual(Layer hidden = layers::Dense(4, {.activation = "relu",
                                                       .seed = 1})) {
    KerasTensor x = Input({4});
    KerasTensor y = layers::Add()({hidden(x), x});
    Functional m = Functional::Create({x}, {layers::Dense(1, {.seed = 2})(y)},
                                      {.graph = &g_})
                       .value();
    EXPECT_TRUE(
        m.Compile({.optimizer = optimizers::Adam({.learning_rate = 0.01f}),
                   .loss = losses::MeanSquaredError()})
            .ok());
    return m;
  }
  Graph g_;
};

TEST_F(FunctionalTest, AResidualBlockTrains) {
  Functional m = Residual();
  auto [x, y] = SumData(64, 4, 1);
  History h = m.Fit(x, y, {.epochs = 20, .verbose = 0}).value();
  const std::vector<float>& loss = h.values("loss");
  ASSERT_EQ(loss.size(), 20u);
  EXPECT_LT(loss.back(), loss.front() * 0.5f);
  EXPECT_EQ(m.Predict(x).value().shape(), TensorShape({64, 1}));
}

// Callbacks get a Sequential handle on the same model: its training
// methods reach the functional model.
class StopAfterOneEpoch : public Callback {
 public:
  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo&) override {
    model_.emplace(model);
    name_ = model.name();
    return absl::OkStatus();
  }
  absl::Status OnEpochEnd(int, const Logs&) override {
    model_->StopTraining();
    return absl::OkStatus();
  }
  absl::Status OnTrainEnd(const Logs&) override {
    model_.reset();
    return absl::OkStatus();
  }
  const std::string& name() const { return name_; }

 private:
  std::optional<Sequential> model_;
  std::string name_;
};

TEST_F(FunctionalTest, ACallbackSeesAndStopsTheFunctionalModel) {
  Functional m = Residual();
  auto [x, y] = SumData(16, 4, 3);
  auto stop = std::make_shared<StopAfterOneEpoch>();
  History h =
      m.Fit(x, y, {.epochs = 5, .verbose = 0, .callbacks = {stop}}).value();
  EXPECT_EQ(h.epoch.size(), 1u);
  EXPECT_EQ(stop->name(), m.name());
}

TEST_F(FunctionalTest, ItsLearningRateIsTheCompiledOnesAndSettable) {
  Functional m = Residual();
  EXPECT_EQ(m.learning_rate().value(), 0.01f);
  ASSERT_TRUE(m.SetLearningRate(0.5f).ok());
  EXPECT_EQ(m.learning_rate().value(), 0.5f);
}

// Keras's `model.stop_training = True` on the functional model itself.
class StopTheModel : public Callback {
 public:
  explicit StopTheModel(Functional* model) : model_(model) {}
  absl::Status OnEpochEnd(int, const Logs&) override {
    model_->StopTraining();
    return absl::OkStatus();
  }

 private:
  Functional* model_;
};

TEST_F(FunctionalTest, StopTrainingEndsItsFit) {
  Functional m = Residual();
  auto [x, y] = SumData(16, 4, 3);
  History h = m.Fit(x, y,
                    {.epochs = 5,
                     .verbose = 0,
                     .callbacks = {std::make_shared<StopTheModel>(&m)}})
                  .value();
  EXPECT_EQ(h.epoch.size(), 1u);
  EXPECT_TRUE(m.stop_training());
}

TEST_F(FunctionalTest, ACallHasTheLayersOutputShape) {
  KerasTensor x = Input({6});
  KerasTensor h = layers::Dense(3)(x);
  ASSERT_TRUE(h.status().ok()) << h.status();
  EXPECT_EQ(h.shape(), TensorShape({3}));
  EXPECT_EQ(h.layer().kind(), "Dense");
  EXPECT_EQ(layers::Concatenate()({h, x}).shape(), TensorShape({9}));
}

TEST_F(FunctionalTest, ASharedLayerHasOneSetOfWeights) {
  Layer shared = layers::Dense(4, {.seed = 3});
  KerasTensor x = Input({4});
  KerasTensor a = shared(x);
  KerasTensor b = shared(a);
  Functional m =
      Functional::Create({x}, {layers::Add()({a, b})}, {.graph = &g_}).value();
  // Input, the shared Dense (kernel and bias once), Add.
  ASSERT_EQ(m.layers().size(), 3u);
  EXPECT_EQ(m.GetWeights().size(), 2u);
  // Both calls use the one kernel: with it the identity and no bias, the
  // output is 2x.
  std::vector<float> eye(16, 0.f);
  for (int i = 0; i < 4; ++i) eye[i * 5] = 1.f;
  ASSERT_TRUE(
      m.SetWeights({Floats({4, 4}, eye), Floats({4}, {0, 0, 0, 0})}).ok());
  Tensor out = m.Predict(Floats({1, 4}, {1, 2, 3, 4})).value();
  EXPECT_THAT(
      std::vector<float>(out.data<float>().begin(), out.data<float>().end()),
      ::testing::ElementsAre(2, 4, 6, 8));
}

TEST_F(FunctionalTest, AMergeOfIncompatibleShapesIsRefusedAtCreate) {
  KerasTensor a = Input({4});
  KerasTensor b = Input({3});
  KerasTensor sum = layers::Add()({a, b});
  EXPECT_THAT(std::string(sum.status().message()),
              HasSubstr("Inputs have incompatible shapes. Received shapes "
                        "(4,) and (3,)"));
  absl::StatusOr<Functional> m =
      Functional::Create({a}, {layers::Dense(1)(sum)}, {.graph = &g_});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(m.status().message()),
              HasSubstr("Functional::Create: output 0: Add"));
}

TEST_F(FunctionalTest, AConcatenateOfMismatchedShapesIsRefused) {
  KerasTensor c = layers::Concatenate()({Input({2, 3}), Input({4, 3})});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  KerasTensor d = layers::Concatenate()({Input({2, 3}), Input({2, 5})});
  ASSERT_TRUE(d.status().ok()) << d.status();
  EXPECT_EQ(d.shape(), TensorShape({2, 8}));
  KerasTensor e = layers::Concatenate()({Input({2, 3}), Input({4})});
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("A `Concatenate` layer requires inputs with matching "
                        "shapes except for the concatenation axis. Received: "
                        "input_shape=[(None, 2, 3), (None, 4)]"));
}

TEST_F(FunctionalTest, SubtractTakesExactlyTwoInputs) {
  KerasTensor x = Input({2});
  KerasTensor d = layers::Subtract()({x, x, x});
  EXPECT_THAT(std::string(d.status().message()),
              HasSubstr("should be called on exactly 2 inputs"));
}

TEST_F(FunctionalTest, AMergeLayerOnOneValueIsRefused) {
  KerasTensor s = layers::Add()(Input({2}));
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("A merge layer should be called on a list of inputs"));
}

TEST_F(FunctionalTest, AnErrorCarriesThroughLaterCalls) {
  KerasTensor bad = layers::Dense(0)(Input({2}));
  KerasTensor later = layers::Dense(1)(bad);
  EXPECT_FALSE(later.status().ok());
  EXPECT_EQ(later.status().message(), bad.status().message());
}

TEST_F(FunctionalTest, AnOutputOfAnUnlistedInputIsRefused) {
  KerasTensor a = Input({2});
  KerasTensor b = Input({2});
  absl::StatusOr<Functional> m =
      Functional::Create({a}, {layers::Add()({a, b})}, {.graph = &g_});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(m.status().message()),
              HasSubstr("graph disconnected"));
}

TEST_F(FunctionalTest, ASequentialRefusesAMergeLayer) {
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({2}), layers::Add()}, {.graph = &g_});
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(m.status().message()),
              HasSubstr("called on a list of inputs"));
}

TEST_F(FunctionalTest, SummaryListsEachLayerOnceWithItsConnections) {
  Layer shared = layers::Dense(4, {.name = "shared"});
  KerasTensor x = Input({4}, "x");
  KerasTensor a = shared(x);
  KerasTensor b = shared(a);
  Functional m = Functional::Create({x}, {layers::Add({"sum"})({a, b})},
                                    {.name = "residual", .graph = &g_})
                     .value();
  const std::string s = m.Summary();
  EXPECT_THAT(s, HasSubstr("Model: \"residual\""));
  EXPECT_THAT(s, HasSubstr("Connected to"));
  EXPECT_THAT(s, HasSubstr("x (InputLayer)"));
  // The shared layer: one row, 20 parameters, reading x then itself.
  EXPECT_THAT(s, HasSubstr("shared (Dense)"));
  EXPECT_THAT(s, HasSubstr("x[0][0]"));
  EXPECT_THAT(s, HasSubstr("shared[0][0]"));
  EXPECT_THAT(s, HasSubstr("shared[1][0]"));
  EXPECT_THAT(s, HasSubstr("sum (Add)"));
  EXPECT_THAT(s, HasSubstr("Total params: 20\n"));
}

TEST_F(FunctionalTest, ADroppedModelsNodesGoWhileASharedLayerStays) {
  Layer shared = layers::Dense(4, {.activation = "relu", .seed = 5});
  auto [x, y] = SumData(32, 4, 2);
  Functional keep = Residual(shared);
  g_.Collect();
  const int64_t before = g_.num_nodes();
  std::vector<Tensor> before_drop;
  {
    Functional other = Residual(shared);
    ASSERT_TRUE(other.Fit(x, y, {.verbose = 0}).ok());
    before_drop = keep.GetWeights();  // the shared kernel trained by `other`
  }
  g_.Collect();
  EXPECT_EQ(g_.num_nodes(), before);
  EXPECT_TRUE(SameWeights(keep.GetWeights(), before_drop));
  ASSERT_TRUE(keep.Fit(x, y, {.verbose = 0}).ok());
  EXPECT_FALSE(SameWeights(keep.GetWeights(), before_drop));
}

TEST_F(FunctionalTest, TwoHundredModelsSharingALayerLeaveTheGraphAsItWas) {
  Layer shared = layers::Dense(4, {.activation = "relu", .seed = 6});
  Tensor x = SumData(8, 4, 4).first;
  Functional keep = Residual(shared);
  g_.Collect();
  const int64_t before = g_.num_nodes();
  for (int i = 0; i < 200; ++i) {
    Functional m = Residual(shared);
    ASSERT_TRUE(m.Predict(x).ok());
  }
  g_.Collect();
  EXPECT_EQ(g_.num_nodes(), before);
  EXPECT_TRUE(keep.Predict(x).ok());
}

// --- Several inputs and outputs -------------------------------------------

// Two inputs ("title" [3], "body" [2]) joined, two outputs: "priority" (one
// value, mean squared error) and "department" (3 classes, softmax).
class MultiIoTest : public FunctionalTest {
 protected:
  struct Data {
    std::vector<Tensor> x;  // title, body
    std::vector<Tensor> y;  // priority, department
  };

  Functional TwoByTwo(Layer shared = layers::Dense(4, {.activation = "relu",
                                                       .seed = 3})) {
    KerasTensor title = Input({3}, "title");
    KerasTensor body = Input({2}, "body");
    KerasTensor h = layers::Concatenate()({shared(title), body});
    KerasTensor priority = layers::Dense(1, {.name = "priority", .seed = 4})(h);
    KerasTensor department = layers::Dense(
        3, {.activation = "softmax", .name = "department", .seed = 5})(h);
    return Functional::Create({title, body}, {priority, department},
                              {.graph = &g_})
        .value();
  }

  static CompileOptions TwoLosses(std::vector<double> weights = {}) {
    return {.optimizer = optimizers::Adam({.learning_rate = 0.02f}),
            .losses = {losses::MeanSquaredError(),
                       losses::SparseCategoricalCrossentropy()},
            .loss_weights = std::move(weights)};
  }

  // n samples: priority = sum of title and body, department = which of
  // three bands the body's first value is in.
  static Data MakeData(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> title(n * 3), body(n * 2), priority(n);
    std::vector<int32_t> department(n);
    for (int64_t i = 0; i < n; ++i) {
      for (int j = 0; j < 3; ++j) priority[i] += title[i * 3 + j] = u(rng);
      for (int j = 0; j < 2; ++j) priority[i] += body[i * 2 + j] = u(rng);
      const float b = body[i * 2];
      department[i] = b < -0.33f ? 0 : (b < 0.33f ? 1 : 2);
    }
    return {{Floats({n, 3}, title), Floats({n, 2}, body)},
            {Floats({n, 1}, priority),
             Tensor::FromData<int32_t>({n}, department).value()}};
  }
};

TEST_F(MultiIoTest, AModelOfTwoInputsAndTwoOutputsIsCreated) {
  Functional m = TwoByTwo();
  EXPECT_EQ(m.inputs().size(), 2u);
  EXPECT_EQ(m.outputs().size(), 2u);
  EXPECT_EQ(m.input_names(), (std::vector<std::string>{"title", "body"}));
  EXPECT_EQ(m.output_names(),
            (std::vector<std::string>{"priority", "department"}));
}

TEST_F(MultiIoTest, PredictGivesOneTensorPerOutput) {
  Functional m = TwoByTwo();
  Data d = MakeData(5, 1);
  std::vector<Tensor> out = m.Predict(d.x, 2).value();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), TensorShape({5, 1}));
  EXPECT_EQ(out[1].shape(), TensorShape({5, 3}));
}

TEST_F(MultiIoTest, TheTotalLossIsTheWeightedSumOfEachOutputsLoss) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(m.Compile(TwoLosses({0.7, 0.2})).ok());
  Data d = MakeData(7, 2);
  std::map<std::string, float> logs = m.Evaluate(d.x, d.y, 3).value();
  // Each output's loss by hand from the predictions.
  std::vector<Tensor> out = m.Predict(d.x).value();
  const int64_t n = 7;
  Eigen::Map<const Eigen::ArrayXf> p(out[0].data<float>().data(), n);
  Eigen::Map<const Eigen::ArrayXf> t(d.y[0].data<float>().data(), n);
  const double mse = (p - t).square().mean();
  double cce = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t label = d.y[1].data<int32_t>()[i];
    cce -= std::log(out[1].data<float>()[i * 3 + label]);
  }
  cce /= n;
  EXPECT_NEAR(logs.at("priority_loss"), mse, 1e-5);
  EXPECT_NEAR(logs.at("department_loss"), cce, 1e-5);
  EXPECT_NEAR(logs.at("loss"), 0.7 * mse + 0.2 * cce, 1e-5);
}

TEST_F(MultiIoTest, FitTrainsBothOutputs) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(m.Compile(TwoLosses()).ok());
  Data d = MakeData(128, 3);
  History h = m.Fit(d.x, d.y, {.epochs = 30, .verbose = 0}).value();
  for (const char* key : {"loss", "priority_loss", "department_loss"}) {
    const std::vector<float>& v = h.values(key);
    ASSERT_EQ(v.size(), 30u) << key;
    EXPECT_LT(v.back(), 0.75f * v.front()) << key;
  }
}

TEST_F(MultiIoTest, HistoryKeysAreKeras3sPerOutputNames) {
  Functional m = TwoByTwo();
  CompileOptions options = TwoLosses();
  options.output_metrics = {{}, {"accuracy"}};
  ASSERT_TRUE(m.Compile(options).ok());
  Data d = MakeData(20, 4);
  History h =
      m.Fit(d.x, d.y, {.epochs = 1, .verbose = 0, .validation_split = 0.25})
          .value();
  std::vector<std::string> keys;
  for (const auto& [key, values] : h.history) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "department_accuracy", "department_loss", "loss",
                      "priority_loss", "val_department_accuracy",
                      "val_department_loss", "val_loss", "val_priority_loss"}));
}

TEST_F(MultiIoTest, ValidationListsAreValidatedOn) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(m.Compile(TwoLosses()).ok());
  Data d = MakeData(16, 5);
  Data v = MakeData(6, 6);
  FitOptions options{.epochs = 1, .verbose = 0};
  options.validation_lists.emplace(v.x, v.y);
  History h = m.Fit(d.x, d.y, options).value();
  std::map<std::string, float> eval = m.Evaluate(v.x, v.y).value();
  EXPECT_FLOAT_EQ(h.values("val_loss").at(0), eval.at("loss"));
  EXPECT_FLOAT_EQ(h.values("val_priority_loss").at(0),
                  eval.at("priority_loss"));
}

TEST_F(MultiIoTest, AnOutputWithoutALossIsNotTrainedOn) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(
      m.Compile({.optimizer = optimizers::Adam({.learning_rate = 0.02f}),
                 .losses = {losses::MeanSquaredError(), Loss()}})
          .ok());
  Data d = MakeData(16, 7);
  const std::vector<Tensor> before = m.GetWeights();
  // y for the trained output only.
  History h = m.Fit(d.x, {d.y[0]}, {.epochs = 2, .verbose = 0}).value();
  std::vector<std::string> keys;
  for (const auto& [key, values] : h.history) keys.push_back(key);
  EXPECT_EQ(keys, std::vector<std::string>{"loss"});
  const std::vector<Tensor> after = m.GetWeights();
  // The department head's kernel and bias (the last two) are unchanged.
  ASSERT_EQ(after.size(), 6u);
  EXPECT_TRUE(SameWeights({before[4], before[5]}, {after[4], after[5]}));
  EXPECT_FALSE(SameWeights({before[2]}, {after[2]}));
}

TEST_F(MultiIoTest, ShuffledBatchesKeepEachSamplesInputsAndLabelsTogether) {
  // The target is the sum of both inputs: learnable only when every batch
  // takes the same rows of title, body and the labels.
  KerasTensor a = Input({3});
  KerasTensor b = Input({2});
  Functional m =
      Functional::Create(
          {a, b},
          {layers::Dense(1, {.seed = 8})(layers::Concatenate()({a, b}))},
          {.graph = &g_})
          .value();
  ASSERT_TRUE(
      m.Compile({.optimizer = optimizers::Adam({.learning_rate = 0.05f}),
                 .loss = losses::MeanSquaredError()})
          .ok());
  Data d = MakeData(64, 9);
  History h = m.Fit(d.x, {d.y[0]},
                    {.epochs = 60,
                     .batch_size = 8,
                     .shuffle = true,
                     .verbose = 0,
                     .seed = 3})
                  .value();
  EXPECT_LT(h.values("loss").back(), 0.01f);
}

TEST_F(MultiIoTest, AModelOfOneOutputKeepsItsKeysWithSeveralInputs) {
  KerasTensor a = Input({3});
  KerasTensor b = Input({2});
  Functional m =
      Functional::Create({a, b},
                         {layers::Dense(3, {.activation = "softmax"})(
                             layers::Concatenate()({a, b}))},
                         {.graph = &g_})
          .value();
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                         .loss = losses::SparseCategoricalCrossentropy(),
                         .metrics = {"accuracy"}})
                  .ok());
  Data d = MakeData(8, 10);
  std::map<std::string, float> logs = m.Evaluate(d.x, {d.y[1]}).value();
  std::vector<std::string> keys;
  for (const auto& [key, value] : logs) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"accuracy", "loss"}));
}

TEST_F(MultiIoTest, OneSampleWeightScalesEveryOutputsLoss) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(m.Compile(TwoLosses({0.7, 0.2})).ok());
  Data d = MakeData(7, 11);
  std::map<std::string, float> plain = m.Evaluate(d.x, d.y, 3).value();
  Tensor twos = Floats({7}, std::vector<float>(7, 2.f));
  std::map<std::string, float> weighted = m.Evaluate(d.x, d.y, twos, 3).value();
  for (const char* key : {"loss", "priority_loss", "department_loss"}) {
    EXPECT_NEAR(weighted.at(key), 2 * plain.at(key), 1e-5) << key;
  }
}

TEST_F(MultiIoTest, ClassWeightIsRefusedForSeveralOutputsAsKeras3) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(m.Compile(TwoLosses()).ok());
  Data d = MakeData(8, 12);
  absl::Status s =
      m.Fit(d.x, d.y, {.verbose = 0, .class_weight = {{0, 2.f}}}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("`class_weight` is only supported for Models "
                             "with a single output."),
            std::string::npos)
      << s;
}

TEST_F(MultiIoTest, ASampleWeightOfAnotherSampleCountIsRefused) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(m.Compile(TwoLosses()).ok());
  Data d = MakeData(8, 13);
  absl::Status s =
      m.Evaluate(d.x, d.y, Floats({5}, std::vector<float>(5, 1.f))).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("sample_weight must be float of shape [8]"),
            std::string::npos)
      << s;
}

TEST_F(MultiIoTest, TheListFormsTakeTheScheduleArguments) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(m.Compile(TwoLosses()).ok());
  Data d = MakeData(16, 14);
  Data v = MakeData(6, 15);
  FitOptions options{
      .epochs = 3,
      .batch_size = 4,
      .verbose = 0,
      .initial_epoch = 1,
      .steps_per_epoch = 2,
      .validation_freq = 2,
      .sample_weight = Floats({16}, std::vector<float>(16, 1.f)),
      .validation_sample_weight = Floats({6}, std::vector<float>(6, 1.f))};
  options.validation_lists.emplace(v.x, v.y);
  History h = m.Fit(d.x, d.y, options).value();
  EXPECT_EQ(h.epoch, (std::vector<int>{1, 2}));
  EXPECT_EQ(h.values("priority_loss").size(), 2u);
  // Only after epoch 2 (Keras counts from 1).
  EXPECT_EQ(h.values("val_priority_loss").size(), 1u);
  EXPECT_EQ(h.values("val_department_loss").size(), 1u);
}

TEST_F(MultiIoTest, AnInputOfAnotherSampleCountIsRefusedNamingBoth) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(m.Compile(TwoLosses()).ok());
  Data d = MakeData(6, 11);
  d.x[1] = MakeData(5, 11).x[1];
  absl::StatusOr<History> h = m.Fit(d.x, d.y, {.verbose = 0});
  ASSERT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(h.status().message()),
              HasSubstr("input 'body' (x[1]) has 5 samples but input 'title' "
                        "(x[0]) has 6"));
}

TEST_F(MultiIoTest, ALabelOfAnotherSampleCountIsRefusedNamingTheOutput) {
  Functional m = TwoByTwo();
  ASSERT_TRUE(m.Compile(TwoLosses()).ok());
  Data d = MakeData(6, 12);
  d.y[1] = MakeData(4, 12).y[1];
  absl::StatusOr<std::map<std::string, float>> e = m.Evaluate(d.x, d.y);
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("has 6 samples but output 'department' (y[1]) has 4"));
}

TEST_F(MultiIoTest, AMissingInputIsRefused) {
  Functional m = TwoByTwo();
  Data d = MakeData(4, 13);
  absl::StatusOr<std::vector<Tensor>> p =
      m.Predict(std::vector<Tensor>{d.x[0]});
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("the model has 2 inputs but x has 1 tensors"));
}

TEST_F(MultiIoTest, LossesOfAnotherCountThanTheOutputsAreRefused) {
  Functional m = TwoByTwo();
  absl::Status s = m.Compile({.optimizer = optimizers::Adam(),
                              .losses = {losses::MeanSquaredError()}});
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("losses has 1 entries but the model has 2 outputs"));
}

TEST_F(MultiIoTest, SavingAModelOfSeveralOutputsIsNotImplemented) {
  Functional m = TwoByTwo();
  EXPECT_EQ(m.Save(::testing::TempDir() + "/multi_io").code(),
            absl::StatusCode::kUnimplemented);
}

TEST_F(MultiIoTest, ADroppedTwoOutputModelsNodesGoWhileASharedLayerStays) {
  Layer shared = layers::Dense(4, {.activation = "relu", .seed = 14});
  Data d = MakeData(16, 14);
  Functional keep = TwoByTwo(shared);
  ASSERT_TRUE(keep.Compile(TwoLosses()).ok());
  g_.Collect();
  const int64_t before = g_.num_nodes();
  std::vector<Tensor> before_drop;
  {
    Functional other = TwoByTwo(shared);
    ASSERT_TRUE(other.Compile(TwoLosses()).ok());
    ASSERT_TRUE(other.Fit(d.x, d.y, {.verbose = 0}).ok());
    before_drop = keep.GetWeights();  // the shared kernel trained by `other`
  }
  g_.Collect();
  EXPECT_EQ(g_.num_nodes(), before);
  EXPECT_TRUE(SameWeights(keep.GetWeights(), before_drop));
  ASSERT_TRUE(keep.Fit(d.x, d.y, {.verbose = 0}).ok());
  EXPECT_FALSE(SameWeights(keep.GetWeights(), before_drop));
}

}  // namespace
}  // namespace graphgc
