#include "models/sequential.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "runtime/graph.h"

namespace graphgc {
namespace {

Tensor Floats(TensorShape shape, std::vector<float> v) {
  return Tensor::FromData<float>(shape, v).value();
}

Tensor Ints(std::vector<int32_t> v) {
  return Tensor::FromData<int32_t>({static_cast<int64_t>(v.size())}, v).value();
}

// Random features in [0, 1) and labels in [0, classes).
std::pair<Tensor, Tensor> RandomData(int64_t n, int64_t features, int classes,
                                     uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  std::uniform_int_distribution<int32_t> label(0, classes - 1);
  std::vector<float> xs(n * features);
  std::vector<int32_t> ys(n);
  for (float& v : xs) v = u(rng);
  for (int32_t& v : ys) v = label(rng);
  return {Floats({n, features}, xs), Ints(ys)};
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

class SequentialTest : public ::testing::Test {
 protected:
  Sequential Mlp(const std::string& name = "") {
    Sequential m = Sequential::Create(
                       {layers::Input({10}),
                        layers::Dense(16, {.activation = "relu", .seed = 1}),
                        layers::Dense(3, {.activation = "softmax", .seed = 2})},
                       {.name = name, .graph = &g_})
                       .value();
    EXPECT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                           .loss = losses::SparseCategoricalCrossentropy(),
                           .metrics = {"accuracy"}})
                    .ok());
    return m;
  }
  // Input(10) -> Dense(3), not compiled.
  Sequential Linear() {
    return Sequential::Create({layers::Input({10}), layers::Dense(3)},
                              {.graph = &g_})
        .value();
  }
  Graph g_;
};

TEST_F(SequentialTest, LayersGetKerasStyleNames) {
  Sequential a = Mlp();
  Sequential b = Mlp();
  EXPECT_EQ(a.name(), "sequential");
  EXPECT_EQ(b.name(), "sequential_1");
  EXPECT_EQ(a.layers()[1].name(), "dense");
  EXPECT_EQ(a.layers()[2].name(), "dense_1");
  EXPECT_EQ(b.layers()[1].name(), "dense_2");
}

TEST_F(SequentialTest, NamesOfDroppedModelsAreReusedAfterACollection) {
  { Sequential a = Mlp(); }
  g_.Collect();
  Sequential b = Mlp();
  EXPECT_EQ(b.name(), "sequential");
  EXPECT_EQ(b.layers()[1].name(), "dense");
}

TEST_F(SequentialTest, GetWeightsGivesKernelAndBiasPerDenseLayer) {
  Sequential m = Mlp();
  std::vector<Tensor> w = m.GetWeights();
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0].shape(), (TensorShape{10, 16}));
  EXPECT_EQ(w[1].shape(), (TensorShape{16}));
  EXPECT_EQ(w[2].shape(), (TensorShape{16, 3}));
  EXPECT_EQ(w[3].shape(), (TensorShape{3}));
  for (float b : w[1].data<float>()) EXPECT_EQ(b, 0.f);  // bias zeros
  const float limit = std::sqrt(6.f / (10 + 16));        // glorot_uniform
  for (float k : w[0].data<float>()) EXPECT_LE(std::fabs(k), limit);
}

TEST_F(SequentialTest, SetWeightsThenGetWeightsRoundTrips) {
  Sequential m = Mlp();
  std::vector<Tensor> w = m.GetWeights();
  std::vector<Tensor> mine;
  for (const Tensor& t : w) {
    Tensor c = Tensor::Zeros(DT_FLOAT, t.shape()).value();
    float k = 0.5f;
    for (float& v : c.mutable_data<float>()) v = (k += 0.25f);
    mine.push_back(c);
  }
  ASSERT_TRUE(m.SetWeights(mine).ok());
  EXPECT_TRUE(SameWeights(m.GetWeights(), mine));
}

TEST_F(SequentialTest, SeparableProblemReachesHighAccuracy) {
  // Class = which of three feature blocks has the largest sum.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0, 1);
  const int n = 600;
  std::vector<float> xs(n * 10);
  std::vector<int32_t> ys(n);
  for (int i = 0; i < n; ++i) {
    ys[i] = i % 3;
    for (int j = 0; j < 10; ++j) {
      xs[i * 10 + j] = u(rng) + (j / 3 == ys[i] ? 1.5f : 0.f);
    }
  }
  Tensor x = Floats({n, 10}, xs), y = Ints(ys);
  Sequential m = Mlp();
  History h = m.Fit(x, y, {.epochs = 20, .verbose = 0, .seed = 3}).value();
  EXPECT_GE(h.values("accuracy").back(), 0.95f);
  EXPECT_GE(m.Evaluate(x, y).value().at("accuracy"), 0.95f);
  EXPECT_LT(h.values("loss").back(), h.values("loss").front());
}

TEST_F(SequentialTest, OneAdamStepMatchesTheUpdateWorkedOutByHand) {
  // One Dense(1) layer, MSE, one sample: dL/dw = 2 (w.x + b - t) x.
  Sequential m =
      Sequential::Create({layers::Input({2}), layers::Dense(1)}, {.graph = &g_})
          .value();
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  ASSERT_TRUE(
      m.SetWeights({Floats({2, 1}, {0.5f, -0.25f}), Floats({1}, {0.1f})}).ok());
  Tensor x = Floats({1, 2}, {1.0f, 2.0f});
  Tensor t = Floats({1, 1}, {3.0f});
  ASSERT_TRUE(
      m.Fit(x, t, {.batch_size = 1, .shuffle = false, .verbose = 0}).ok());
  const double pred = 0.5 * 1.0 + -0.25 * 2.0 + 0.1;  // 0.1
  const double err = 2 * (pred - 3.0);
  const double g[3] = {err * 1.0, err * 2.0, err};  // kernel0, kernel1, bias
  const double lr = 0.001, b1 = 0.9, b2 = 0.999, eps = 1e-7;
  const double lr_t = lr * std::sqrt(1 - b2) / (1 - b1);
  auto step = [&](double w, double grad) {
    const double mm = (1 - b1) * grad, vv = (1 - b2) * grad * grad;
    return w - lr_t * mm / (std::sqrt(vv) + eps);
  };
  std::vector<Tensor> w = m.GetWeights();
  EXPECT_NEAR(w[0].data<float>()[0], step(0.5, g[0]), 1e-6);
  EXPECT_NEAR(w[0].data<float>()[1], step(-0.25, g[1]), 1e-6);
  EXPECT_NEAR(w[1].data<float>()[0], step(0.1, g[2]), 1e-6);
}

TEST_F(SequentialTest, SgdWithMomentumMatchesKeras) {
  Sequential m = Sequential::Create({layers::Input({1}),
                                     layers::Dense(1, {.use_bias = false})},
                                    {.graph = &g_})
                     .value();
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD(
                             {.learning_rate = 0.1f, .momentum = 0.9f}),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  ASSERT_TRUE(m.SetWeights({Floats({1, 1}, {1.0f})}).ok());
  Tensor x = Floats({1, 1}, {1.0f}), t = Floats({1, 1}, {0.0f});
  ASSERT_TRUE(m.Fit(x, t, {.epochs = 2, .batch_size = 1, .verbose = 0}).ok());
  // g = 2w; v1 = -0.1*2 = -0.2, w1 = 0.8; v2 = 0.9*-0.2 - 0.1*1.6 = -0.34, w2 =
  // 0.46.
  EXPECT_NEAR(m.GetWeights()[0].data<float>()[0], 0.46f, 1e-6);
}

// Input 16x16x4 -> Conv2D(16, 3x3, same, relu) -> MaxPooling2D(2) ->
// Flatten -> Dense(10, softmax), SGD, fixed seeds: its convs (and their
// gradients) have enough work per op to be split across 4 threads.
Sequential ConvNet(Graph& g, int threads) {
  Sequential m =
      Sequential::Create(
          {layers::Input({16, 16, 4}),
           layers::Conv2D(16, {3},
                          {.padding = "same", .activation = "relu", .seed = 1}),
           layers::MaxPooling2D({2}), layers::Flatten(),
           layers::Dense(10, {.activation = "softmax", .seed = 2})},
          {.graph = &g, .intra_op_threads = threads})
          .value();
  EXPECT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                         .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
  return m;
}

TEST_F(SequentialTest, FourThreadsTrainAsOneThreadDoes) {
  auto [flat, y] = RandomData(64, 16 * 16 * 4, 10, 9);
  const Tensor x =
      Tensor::FromData<float>({64, 16, 16, 4},
                              std::vector<float>(flat.data<float>().begin(),
                                                 flat.data<float>().end()))
          .value();
  Sequential one = ConvNet(g_, 1);
  Sequential four = ConvNet(g_, 4);
  const FitOptions fit{.epochs = 2, .shuffle = false, .verbose = 0};
  const History h1 = one.Fit(x, y, fit).value();
  const History h4 = four.Fit(x, y, fit).value();
  ASSERT_EQ(h1.values("loss").size(), 2u);
  ASSERT_EQ(h4.values("loss").size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_NEAR(h4.values("loss")[e], h1.values("loss")[e], 1e-5);
  }
  const std::vector<Tensor> w1 = one.GetWeights(), w4 = four.GetWeights();
  ASSERT_EQ(w1.size(), w4.size());
  for (size_t i = 0; i < w1.size(); ++i) {
    ASSERT_EQ(w1[i].shape(), w4[i].shape());
    for (int64_t j = 0; j < w1[i].num_elements(); ++j) {
      EXPECT_NEAR(w4[i].data<float>()[j], w1[i].data<float>()[j], 1e-5)
          << "weight " << i << " element " << j;
    }
  }
}

TEST_F(SequentialTest, PredictReturnsOneRowPerSample) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(70, 10, 3, 1);
  Tensor p = m.Predict(x).value();
  EXPECT_EQ(p.shape(), (TensorShape{70, 3}));
  for (int i = 0; i < 70; ++i) {
    float sum = 0;
    for (int j = 0; j < 3; ++j) sum += p.data<float>()[i * 3 + j];
    EXPECT_NEAR(sum, 1.0f, 1e-5);  // softmax rows
  }
}

TEST_F(SequentialTest, FitWithValidationDataRecordsValLoss) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(100, 10, 3, 1);
  auto [vx, vy] = RandomData(30, 10, 3, 2);
  History h = m.Fit(x, y,
                    {.epochs = 2,
                     .verbose = 0,
                     .validation_data = std::make_pair(vx, vy)})
                  .value();
  EXPECT_EQ(h.values("val_loss").size(), 2u);
  EXPECT_EQ(h.values("val_accuracy").size(), 2u);
}

TEST_F(SequentialTest, ShortLastBatchIsTrainedToo) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(33, 10, 3, 1);
  struct Sizes : Callback {
    std::vector<float> sizes;
    absl::Status OnBatchEnd(int64_t, const Logs& logs) override {
      sizes.push_back(logs.at("size"));
      return absl::OkStatus();
    }
  };
  auto sizes = std::make_shared<Sizes>();
  ASSERT_TRUE(m.Fit(x, y, {.verbose = 0, .callbacks = {sizes}}).ok());
  EXPECT_EQ(sizes->sizes, (std::vector<float>{32, 1}));
}

TEST_F(SequentialTest, CallbacksSeeTheKerasOrder) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(40, 10, 3, 1);
  struct Order : Callback {
    std::vector<std::string> calls;
    absl::Status OnTrainBegin(const Sequential&, const TrainInfo&) override {
      calls.push_back("train_begin");
      return absl::OkStatus();
    }
    absl::Status OnEpochBegin(int) override {
      calls.push_back("epoch_begin");
      return absl::OkStatus();
    }
    absl::Status OnBatchBegin(int64_t) override {
      calls.push_back("batch_begin");
      return absl::OkStatus();
    }
    absl::Status OnBatchEnd(int64_t, const Logs&) override {
      calls.push_back("batch_end");
      return absl::OkStatus();
    }
    absl::Status OnEpochEnd(int, const Logs&) override {
      calls.push_back("epoch_end");
      return absl::OkStatus();
    }
    absl::Status OnTrainEnd(const Logs&) override {
      calls.push_back("train_end");
      return absl::OkStatus();
    }
  };
  auto order = std::make_shared<Order>();
  ASSERT_TRUE(m.Fit(x, y, {.verbose = 0, .callbacks = {order}}).ok());
  EXPECT_EQ(order->calls,
            (std::vector<std::string>{"train_begin", "epoch_begin",
                                      "batch_begin", "batch_end", "batch_begin",
                                      "batch_end", "epoch_end", "train_end"}));
}

TEST_F(SequentialTest, SparseLossTakesIntegralFloatClassIds) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(32, 10, 3, 5);
  std::vector<float> ids;
  for (int32_t v : y.data<int32_t>()) ids.push_back(static_cast<float>(v));
  Tensor float_y = Floats({32}, ids);
  absl::StatusOr<std::map<std::string, float>> as_float =
      m.Evaluate(x, float_y);
  ASSERT_TRUE(as_float.ok()) << as_float.status();
  EXPECT_EQ(as_float->at("loss"), m.Evaluate(x, y).value().at("loss"));
  EXPECT_TRUE(m.Fit(x, float_y, {.epochs = 1, .verbose = 0}).ok());
}

// Keras casts y_true to the prediction's dtype: one-hot targets given as
// integers (np.random.randint) train a categorical loss as floats do.
TEST_F(SequentialTest, DenseLossTakesIntegerTargetsAsFloats) {
  Sequential m = Linear();
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                         .loss = *losses::Get("categorical_crossentropy")})
                  .ok());
  auto [x, ids] = RandomData(16, 10, 3, 7);
  std::vector<int64_t> one_hot(16 * 3, 0);
  std::vector<float> as_floats(16 * 3, 0.f);
  for (int i = 0; i < 16; ++i) {
    one_hot[i * 3 + ids.data<int32_t>()[i]] = 1;
    as_floats[i * 3 + ids.data<int32_t>()[i]] = 1.f;
  }
  const Tensor int_y = Tensor::FromData<int64_t>({16, 3}, one_hot).value();
  absl::StatusOr<std::map<std::string, float>> got = m.Evaluate(x, int_y);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->at("loss"),
            m.Evaluate(x, Floats({16, 3}, as_floats)).value().at("loss"));
  EXPECT_TRUE(m.Fit(x, int_y, {.epochs = 1, .verbose = 0}).ok());
}

TEST_F(SequentialTest, SparseLossRefusesNonIntegralFloatLabelsNamingTheSample) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(8, 10, 3, 5);
  std::vector<float> ids(8, 1.f);
  ids[3] = 1.5f;
  absl::Status s = m.Fit(x, Floats({8}, ids), {.verbose = 0}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("float label 1.5 of sample 3"), std::string::npos)
      << s;
}

TEST_F(SequentialTest, ACallbackErrorStopsTheFit) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(100, 10, 3, 1);
  struct Stop : Callback {
    absl::Status OnBatchEnd(int64_t batch, const Logs&) override {
      return batch == 1 ? absl::CancelledError("stop here") : absl::OkStatus();
    }
  };
  absl::StatusOr<History> h =
      m.Fit(x, y, {.verbose = 0, .callbacks = {std::make_shared<Stop>()}});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kCancelled);
}

TEST_F(SequentialTest, TheModelHoldsItsNodesUnderItsOwnerLabel) {
  Sequential m = Mlp();
  std::vector<std::string> chain =
      g_.ExplainRetention("sequential/loss/value").value();
  EXPECT_NE(chain.front().find("Sequential 'sequential'"), std::string::npos);
  EXPECT_EQ(chain.back(), "sequential/loss/value");
}

TEST_F(SequentialTest, DroppingAModelFreesEverythingOnlyItReached) {
  g_.Collect();
  const int64_t before = g_.num_nodes();
  { Sequential m = Mlp(); }
  g_.Collect();
  EXPECT_EQ(g_.num_nodes(), before);
}

TEST_F(SequentialTest, TwoHundredConsecutiveModelsLeaveTheGraphAsItWas) {
  auto [x, y] = RandomData(64, 10, 3, 1);
  g_.Collect();
  const int64_t before = g_.num_nodes();
  for (int i = 0; i < 200; ++i) {
    Sequential m = Mlp();
    ASSERT_TRUE(m.Fit(x, y, {.verbose = 0}).ok());
  }
  g_.Collect();
  EXPECT_EQ(g_.num_nodes(), before);
}

TEST_F(SequentialTest, SharedLayerSurvivesTheOtherModelsDrop) {
  Layer shared = layers::Dense(8, {.activation = "relu", .seed = 5});
  auto build = [&]() {
    Sequential m =
        Sequential::Create({layers::Input({10}), shared,
                            layers::Dense(3, {.activation = "softmax"})},
                           {.graph = &g_})
            .value();
    EXPECT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                           .loss = losses::SparseCategoricalCrossentropy()})
                    .ok());
    return m;
  };
  auto [x, y] = RandomData(64, 10, 3, 1);
  Sequential keep = build();
  std::vector<Tensor> before_drop;
  {
    Sequential other = build();
    ASSERT_TRUE(other.Fit(x, y, {.verbose = 0}).ok());
    before_drop = keep.GetWeights();  // the shared kernel trained by `other`
  }
  g_.Collect();
  EXPECT_TRUE(SameWeights(keep.GetWeights(), before_drop));
  ASSERT_TRUE(keep.Fit(x, y, {.verbose = 0}).ok());
  EXPECT_FALSE(SameWeights(keep.GetWeights(), before_drop));
}

TEST_F(SequentialTest, ALayerKeptByTheUserKeepsItsTrainedWeights) {
  Layer kept = layers::Dense(4, {.seed = 9});
  auto [x, y] = RandomData(64, 10, 4, 1);
  std::vector<Tensor> trained;
  {
    Sequential m =
        Sequential::Create({layers::Input({10}), kept}, {.graph = &g_}).value();
    ASSERT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                           .loss = losses::SparseCategoricalCrossentropy(
                               {.from_logits = true})})
                    .ok());
    ASSERT_TRUE(m.Fit(x, y, {.epochs = 2, .verbose = 0}).ok());
    trained = m.GetWeights();
  }
  g_.Collect();
  Sequential again =
      Sequential::Create({layers::Input({10}), kept}, {.graph = &g_}).value();
  EXPECT_TRUE(SameWeights(again.GetWeights(), trained));
}

// --- bad input: a status, and the model exactly as it was ---

// Evaluate's and Predict's `verbose` (Keras's ProgbarLogger outside fit),
// on stderr, which is not a terminal under the test: the final line only.
class VerboseTest : public SequentialTest {
 protected:
  static std::string Bar() {
    std::string cells;
    for (int i = 0; i < 20; ++i) cells += "━";
    return "4/4 " + cells + " ";
  }
};

TEST_F(VerboseTest, EvaluateVerboseOnePrintsTheStepsBarWithLossAndMetrics) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(100, 10, 3, 1);  // 4 steps of 32
  testing::internal::CaptureStderr();
  auto logs = m.Evaluate(x, y, 32, /*verbose=*/1);
  const std::string text = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(logs.ok()) << logs.status();
  // gtest's POSIX regex: std::regex trips gcc 12's -Wmaybe-uninitialized
  // under ASan.
  EXPECT_THAT(text, testing::MatchesRegex(
                        Bar() + "[0-9]+s [0-9]+(s|ms|us)/step - accuracy: "
                                "[-0-9.e+]+ - loss: [0-9.]+\n"));
  EXPECT_TRUE(absl::StrContains(
      text, absl::StrFormat("- loss: %.4f\n", logs->at("loss"))))
      << text;
}

TEST_F(VerboseTest, EvaluateVerboseTwoPrintsKerasThreesOneLine) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(100, 10, 3, 1);
  testing::internal::CaptureStderr();
  ASSERT_TRUE(m.Evaluate(x, y, 32, /*verbose=*/2).ok());
  const std::string text = testing::internal::GetCapturedStderr();
  EXPECT_THAT(text, testing::MatchesRegex(
                        "4/4 - [0-9]+s - [0-9]+(s|ms|us)/step - accuracy: "
                        "[-0-9.e+]+ - loss: [0-9.]+\n"));
}

TEST_F(VerboseTest, EvaluateAndPredictVerboseZeroPrintNothing) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(100, 10, 3, 1);
  testing::internal::CaptureStderr();
  ASSERT_TRUE(m.Evaluate(x, y).ok());
  ASSERT_TRUE(m.Predict(x).ok());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST_F(VerboseTest, PredictVerboseOnePrintsTheStepsBarWithoutMetrics) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(100, 10, 3, 1);
  testing::internal::CaptureStderr();
  ASSERT_TRUE(m.Predict(x, 32, /*verbose=*/1).ok());
  const std::string text = testing::internal::GetCapturedStderr();
  EXPECT_THAT(text,
              testing::MatchesRegex(Bar() + "[0-9]+s [0-9]+(s|ms|us)/step\n"));
}

TEST_F(VerboseTest, VerboseOutsideZeroToTwoIsRefused) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(10, 10, 3, 1);
  auto logs = m.Evaluate(x, y, 32, 3);
  EXPECT_EQ(logs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(logs.status().message(),
                                "verbose must be 0, 1 or 2, got 3"));
  EXPECT_EQ(m.Predict(x, 32, -1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

class BadInputTest : public SequentialTest {
 protected:
  void SetUp() override {
    model_ = Mlp();
    weights_ = model_.GetWeights();
    std::tie(x_, y_) = RandomData(50, 10, 3, 1);
  }
  void ExpectUnchanged() {
    EXPECT_TRUE(SameWeights(model_.GetWeights(), weights_));
  }
  Sequential model_ =
      Sequential::Create({layers::Input({1}), layers::Dense(1)}).value();
  std::vector<Tensor> weights_;
  Tensor x_, y_;
};

TEST_F(BadInputTest, FitBeforeCompileIsRefused) {
  Sequential m = Sequential::Create({layers::Input({10}), layers::Dense(3)},
                                    {.graph = &g_})
                     .value();
  absl::StatusOr<History> h = m.Fit(x_, y_, {.verbose = 0});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(h.status().message().find("Compile"), std::string::npos);
}

TEST_F(BadInputTest, WrongFeatureCountIsRefused) {
  auto [x, y] = RandomData(50, 7, 3, 1);
  absl::StatusOr<History> h = model_.Fit(x, y, {.verbose = 0});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("10 features"), std::string::npos);
  ExpectUnchanged();
}

TEST_F(BadInputTest, DifferentLengthsAreRefused) {
  auto [x, y] = RandomData(49, 10, 3, 1);
  absl::StatusOr<History> h = model_.Fit(x_, y, {.verbose = 0});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("50 samples"), std::string::npos);
  ExpectUnchanged();
}

TEST_F(BadInputTest, LabelOutOfRangeIsRefused) {
  std::vector<int32_t> ys(50, 1);
  ys[17] = 3;
  absl::StatusOr<History> h = model_.Fit(x_, Ints(ys), {.verbose = 0});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("sample 17"), std::string::npos);
  ExpectUnchanged();
  ys[17] = -1;
  EXPECT_FALSE(model_.Fit(x_, Ints(ys), {.verbose = 0}).ok());
  ExpectUnchanged();
}

TEST_F(BadInputTest, BatchSizeAndEpochsOutOfRangeAreRefused) {
  EXPECT_EQ(model_.Fit(x_, y_, {.batch_size = 0, .verbose = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(model_.Fit(x_, y_, {.epochs = -1, .verbose = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  ExpectUnchanged();
}

TEST_F(BadInputTest, SetWeightsWithTheWrongCountIsRefused) {
  std::vector<Tensor> three(weights_.begin(), weights_.begin() + 3);
  EXPECT_EQ(model_.SetWeights(three).code(),
            absl::StatusCode::kInvalidArgument);
  ExpectUnchanged();
}

TEST_F(BadInputTest, SetWeightsWithAWrongShapeIsRefusedWhole) {
  std::vector<Tensor> bad = weights_;
  for (float& v : bad[0] = Tensor::Zeros(DT_FLOAT, {10, 16}).value(),
                  bad[0].mutable_data<float>()) {
    v = 1;
  }
  bad[3] = Tensor::Zeros(DT_FLOAT, {4}).value();  // should be [3]
  absl::Status s = model_.SetWeights(bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("weight 3"), std::string::npos);
  ExpectUnchanged();  // weight 0 was not assigned either
}

TEST_F(BadInputTest, ALayerOfAnotherGraphIsRefused) {
  Graph other;
  Layer foreign = layers::Dense(3);
  Sequential there =
      Sequential::Create({layers::Input({10}), foreign}, {.graph = &other})
          .value();
  const int64_t nodes = g_.num_nodes();
  absl::StatusOr<Sequential> here =
      Sequential::Create({layers::Input({10}), foreign}, {.graph = &g_});
  EXPECT_EQ(here.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(here.status().message().find("another graph"), std::string::npos);
  EXPECT_EQ(g_.num_nodes(), nodes);
}

TEST_F(BadInputTest, BadLayerOptionsAreReportedAtCreate) {
  EXPECT_FALSE(Sequential::Create({layers::Input({10}), layers::Dense(0)},
                                  {.graph = &g_})
                   .ok());
  EXPECT_FALSE(Sequential::Create({layers::Input({10}),
                                   layers::Dense(3, {.activation = "mish"})},
                                  {.graph = &g_})
                   .ok());
  EXPECT_FALSE(Sequential::Create({layers::Dense(3)}, {.graph = &g_}).ok());
  EXPECT_FALSE(Sequential::Create({}, {.graph = &g_}).ok());
}

TEST_F(BadInputTest, CompileWithoutOptimizerOrLossIsRefused) {
  Sequential m = Sequential::Create({layers::Input({10}), layers::Dense(3)},
                                    {.graph = &g_})
                     .value();
  EXPECT_FALSE(m.Compile({.loss = losses::MeanSquaredError()}).ok());
  EXPECT_FALSE(m.Compile({.optimizer = optimizers::Adam()}).ok());
  EXPECT_FALSE(m.Compile({.optimizer = optimizers::Adam(),
                          .loss = losses::MeanSquaredError(),
                          .metrics = {"f1"}})
                   .ok());
  EXPECT_FALSE(m.compiled());
}

// --- sizes: a status, never an abort (and nothing huge is allocated) ---

bool Mentions(const absl::Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST_F(BadInputTest, CreateWithAKernelLargerThanMemoryIsRefused) {
  g_.Collect();
  const int64_t nodes = g_.num_nodes();
  // A [256, 2^31] float kernel: 2 TiB, checked before any allocation.
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({256}), layers::Dense(int64_t{1} << 31)}, {.graph = &g_});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Mentions(m.status(), "layer 1")) << m.status();
  EXPECT_EQ(g_.num_nodes(), nodes);
}

TEST_F(BadInputTest, CreateWithAKernelTooLargeToCountIsRefused) {
  // [1024, 2^31]: 2^41 elements, past what a tensor may hold.
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({1024}), layers::Dense(int64_t{1} << 31)}, {.graph = &g_});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(m.status(), "layer 1")) << m.status();
}

// The status of predicting with a Dense(2^21) model on `samples` samples
// of one feature: a [samples, 2^21] result.
absl::Status PredictWide(Graph& g, int64_t samples) {
  Sequential m =
      Sequential::Create({layers::Input({1}), layers::Dense(int64_t{1} << 21)},
                         {.graph = &g})
          .value();
  return m.Predict(Tensor::Zeros(DT_FLOAT, {samples, 1}).value()).status();
}

TEST_F(BadInputTest, PredictOfAResultTooLargeToCountIsRefused) {
  // [2^20, 2^21] predictions: 2^41 elements.
  absl::Status s = PredictWide(g_, int64_t{1} << 20);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "Predict")) << s;
}

TEST_F(BadInputTest, PredictOfAResultLargerThanMemoryIsRefused) {
  // [2^18, 2^21] float predictions: 2 TiB.
  absl::Status s = PredictWide(g_, int64_t{1} << 18);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Mentions(s, "Predict")) << s;
}

// --- calls from a callback during the model's own Fit ---

// Calls `call` with the model at the end of every batch and epoch, keeping
// the statuses.
struct CallsTheModel : Callback {
  CallsTheModel(Sequential model, std::function<absl::Status(Sequential&)> call)
      : model(std::move(model)), call(std::move(call)) {}
  absl::Status OnBatchEnd(int64_t, const Logs&) override {
    statuses.push_back(call(model));
    return absl::OkStatus();
  }
  absl::Status OnEpochEnd(int, const Logs&) override {
    statuses.push_back(call(model));
    return absl::OkStatus();
  }
  Sequential model;
  std::function<absl::Status(Sequential&)> call;
  std::vector<absl::Status> statuses;
};

TEST_F(SequentialTest, CompileDuringItsOwnFitIsRefused) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(64, 10, 3, 1);
  auto recompile = std::make_shared<CallsTheModel>(m, [](Sequential& model) {
    return model.Compile(
        {.optimizer = optimizers::SGD(), .loss = losses::MeanSquaredError()});
  });
  absl::StatusOr<History> h =
      m.Fit(x, y, {.epochs = 2, .verbose = 0, .callbacks = {recompile}});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->values("loss").size(), 2u);
  ASSERT_EQ(recompile->statuses.size(), 6u);  // 2 batches + 1 epoch end, x2
  for (const absl::Status& s : recompile->statuses) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_TRUE(Mentions(s, "own Fit")) << s;
  }
  // Still compiled for integer labels: the refused Compile changed nothing.
  EXPECT_TRUE(m.Evaluate(x, y).ok());
}

TEST_F(SequentialTest, FitDuringItsOwnFitIsRefused) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(32, 10, 3, 1);
  auto refit =
      std::make_shared<CallsTheModel>(m, [x = x, y = y](Sequential& model) {
        return model.Fit(x, y, {.verbose = 0}).status();
      });
  ASSERT_TRUE(m.Fit(x, y, {.verbose = 0, .callbacks = {refit}}).ok());
  ASSERT_FALSE(refit->statuses.empty());
  for (const absl::Status& s : refit->statuses) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  }
}

TEST_F(SequentialTest, EvaluatePredictAndGetWeightsWorkDuringItsOwnFit) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(64, 10, 3, 1);
  auto use = std::make_shared<CallsTheModel>(
      m, [x = x, y = y](Sequential& model) -> absl::Status {
        auto logs = model.Evaluate(x, y);
        if (!logs.ok()) return logs.status();
        absl::StatusOr<Tensor> p = model.Predict(x);
        if (!p.ok()) return p.status();
        if (p->shape() != TensorShape{64, 3}) {
          return absl::InternalError("wrong prediction shape");
        }
        if (model.GetWeights().size() != 4 || logs->count("loss") == 0) {
          return absl::InternalError("weights or loss missing");
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(m.Fit(x, y, {.verbose = 0, .callbacks = {use}}).ok());
  ASSERT_EQ(use->statuses.size(), 3u);
  for (const absl::Status& s : use->statuses) EXPECT_TRUE(s.ok()) << s;
}

TEST_F(SequentialTest, SetWeightsDuringItsOwnFitTakesEffect) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(64, 10, 3, 1);
  std::vector<Tensor> start = m.GetWeights();
  std::vector<Tensor> seen_after_set;
  auto reset = std::make_shared<CallsTheModel>(m, [&](Sequential& model) {
    absl::Status s = model.SetWeights(start);
    seen_after_set = model.GetWeights();
    return s;
  });
  ASSERT_TRUE(m.Fit(x, y, {.verbose = 0, .callbacks = {reset}}).ok());
  for (const absl::Status& s : reset->statuses) EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(SameWeights(seen_after_set, start));
  EXPECT_TRUE(SameWeights(m.GetWeights(), start));  // set after the last step
}

TEST_F(SequentialTest, ACallFromAnotherThreadWaitsForTheFitToEnd) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(64, 10, 3, 1);
  std::atomic<bool> fit_over{false};
  std::atomic<bool> compiled_after_fit{false};
  std::thread other;
  struct StartOther : Callback {
    std::function<void()> start;
    absl::Status OnBatchEnd(int64_t batch, const Logs&) override {
      if (batch == 0) start();
      return absl::OkStatus();
    }
    absl::Status OnTrainEnd(const Logs&) override {
      over->store(true);
      return absl::OkStatus();
    }
    std::atomic<bool>* over = nullptr;
  };
  auto cb = std::make_shared<StartOther>();
  cb->over = &fit_over;
  cb->start = [&] {
    other = std::thread([&, model = m]() mutable {
      absl::Status s = model.Compile(
          {.optimizer = optimizers::SGD(), .loss = losses::MeanSquaredError()});
      compiled_after_fit = s.ok() && fit_over.load();
    });
  };
  ASSERT_TRUE(m.Fit(x, y, {.verbose = 0, .callbacks = {cb}}).ok());
  other.join();
  EXPECT_TRUE(compiled_after_fit);
}

// --- moved-from models ---

TEST_F(SequentialTest, EveryStatusMethodOfAMovedFromModelIsRefused) {
  Sequential m = Mlp();
  Sequential taken = std::move(m);
  auto [x, y] = RandomData(8, 10, 3, 1);
  const absl::Status statuses[] = {
      m.Compile({.optimizer = optimizers::Adam(),
                 .loss = losses::SparseCategoricalCrossentropy()}),
      m.Fit(x, y, {.verbose = 0}).status(),
      m.Evaluate(x, y).status(),
      m.Predict(x).status(),
      m.SetWeights(taken.GetWeights()),
      m.learning_rate().status(),
      m.SetLearningRate(0.1f),
  };
  for (const absl::Status& s : statuses) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_TRUE(Mentions(s, "moved from")) << s;
  }
  EXPECT_TRUE(taken.Predict(x).ok());  // the model itself lives on
}

TEST_F(SequentialTest, AccessorsOfAMovedFromModelAreEmpty) {
  Sequential m = Mlp();
  Sequential taken = std::move(m);
  EXPECT_EQ(m.name(), "");
  EXPECT_TRUE(m.layers().empty());
  EXPECT_TRUE(m.GetWeights().empty());
  EXPECT_TRUE(m.GraphRoots().empty());
  EXPECT_FALSE(m.compiled());
  EXPECT_EQ(taken.name(), "sequential");
}

using SequentialDeathTest = SequentialTest;

TEST_F(SequentialDeathTest, GraphOfAMovedFromModelStopsWithAMessage) {
  Sequential m = Mlp();
  Sequential taken = std::move(m);
  EXPECT_DEATH(m.graph(), "graph\\(\\) called on a moved-from model");
}

// --- every building or running entry is a safe point ---

class SafePointTest : public SequentialTest {
 protected:
  Sequential Plain() {
    return Sequential::Create(
               {layers::Input({10}), layers::Dense(16, {.activation = "relu"}),
                layers::Dense(3, {.activation = "softmax"})},
               {.graph = &g_})
        .value();
  }
  // Runs `make` (which builds a model and drops it) `times` times and
  // returns the most live nodes seen, relative to the start. The tests
  // below bound it by 20 models' nodes and run 200-300 models: a collector
  // that never ran would leave 10-15 times the bound, and the automatic
  // collections (every 256 nodes created, GcPolicy) run a dozen times or
  // more in each. (They ran 1,000-2,000 models before; under TSan that was
  // 35 s of test time for no more evidence.)
  int64_t PeakGrowth(int times, const std::function<void()>& make) {
    g_.Collect();
    const int64_t before = g_.num_nodes();
    int64_t peak = 0;
    for (int i = 0; i < times; ++i) {
      make();
      peak = std::max(peak, g_.num_nodes() - before);
    }
    return peak;
  }
  // The nodes one model made by `make` leaves alive.
  int64_t NodesOfOne(const std::function<Sequential()>& make) {
    g_.Collect();
    const int64_t before = g_.num_nodes();
    Sequential kept = make();
    g_.Collect();
    return g_.num_nodes() - before;
  }
};

TEST_F(SafePointTest, CreatingAndDroppingModelsIsCollected) {
  const int64_t one = NodesOfOne([&] { return Plain(); });
  ASSERT_GT(one, 0);
  const int64_t peak = PeakGrowth(300, [&] { Sequential m = Plain(); });
  EXPECT_LE(peak, 20 * one) << "one model: " << one << " nodes";
  EXPECT_GT(g_.gc_stats().collections, 0);
}

TEST_F(SafePointTest, CompilingAndDroppingModelsIsCollected) {
  auto compiled = [&] {
    Sequential m = Plain();
    EXPECT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                           .loss = losses::SparseCategoricalCrossentropy()})
                    .ok());
    return m;
  };
  const int64_t one = NodesOfOne(compiled);
  const int64_t peak = PeakGrowth(300, [&] { compiled(); });
  EXPECT_LE(peak, 20 * one) << "one model: " << one << " nodes";
}

TEST_F(SafePointTest, PredictingWithAndDroppingModelsIsCollected) {
  auto [x, y] = RandomData(4, 10, 3, 1);
  const int64_t one = NodesOfOne([&] { return Plain(); });
  const int64_t peak = PeakGrowth(200, [&, x = x] {
    Sequential m = Plain();
    EXPECT_TRUE(m.Predict(x).ok());
  });
  EXPECT_LE(peak, 20 * one) << "one model: " << one << " nodes";
}

// --- empty data ---

TEST_F(BadInputTest, EvaluateOnNoSamplesIsRefused) {
  auto [x, y] = RandomData(0, 10, 3, 1);
  absl::StatusOr<std::map<std::string, float>> r = model_.Evaluate(x, y);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(r.status(), "no samples")) << r.status();
}

TEST_F(BadInputTest, FitOnNoSamplesIsRefused) {
  auto [x, y] = RandomData(0, 10, 3, 1);
  absl::StatusOr<History> h = model_.Fit(x, y, {.verbose = 0});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(h.status(), "no samples")) << h.status();
  ExpectUnchanged();
}

TEST_F(BadInputTest, FitWithEmptyValidationDataIsRefused) {
  auto [vx, vy] = RandomData(0, 10, 3, 2);
  absl::StatusOr<History> h = model_.Fit(
      x_, y_, {.verbose = 0, .validation_data = std::make_pair(vx, vy)});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(h.status(), "validation_data")) << h.status();
  ExpectUnchanged();  // refused before the first step
}

TEST_F(SequentialTest, PredictOnNoSamplesGivesAnEmptyResult) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(0, 10, 3, 1);
  absl::StatusOr<Tensor> p = m.Predict(x);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->shape(), (TensorShape{0, 3}));
}

// --- optimizer options that can only make NaN weights ---

// Compile with `optimizer` is refused naming `option`, and changes nothing.
void ExpectRefused(Sequential& m, const Optimizer& optimizer,
                   const std::string& option) {
  absl::Status s = m.Compile({.optimizer = optimizer,
                              .loss = losses::SparseCategoricalCrossentropy()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Mentions(s, option)) << option << ": " << s;
  EXPECT_FALSE(m.compiled());
}

TEST_F(SequentialTest, CompileRefusesAdamOptionsThatMakeNanWeights) {
  Sequential m = Linear();
  const float nan = std::nanf(""), inf = INFINITY;
  ExpectRefused(m, optimizers::Adam({.learning_rate = nan}),
                "learning_rate must be finite and >= 0, got nan");
  ExpectRefused(m, optimizers::Adam({.learning_rate = inf}),
                "learning_rate must be finite and >= 0, got inf");
  ExpectRefused(m, optimizers::Adam({.learning_rate = -0.5f}),
                "learning_rate must be finite and >= 0, got -0.5");
  ExpectRefused(m, optimizers::Adam({.beta_1 = 1.f}),
                "beta_1 must be in [0, 1), got 1");
  ExpectRefused(m, optimizers::Adam({.beta_1 = -0.1f}), "beta_1");
  ExpectRefused(m, optimizers::Adam({.beta_2 = 1.f}),
                "beta_2 must be in [0, 1), got 1");
  ExpectRefused(m, optimizers::Adam({.beta_2 = nan}), "beta_2");
  ExpectRefused(m, optimizers::Adam({.epsilon = 0.f}),
                "epsilon must be finite and > 0, got 0");
  ExpectRefused(m, optimizers::Adam({.epsilon = inf}), "epsilon");
  EXPECT_TRUE(m.Compile({.optimizer = optimizers::Adam({.learning_rate = 0.f}),
                         .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
}

TEST_F(SequentialTest, CompileRefusesSgdOptionsThatMakeNanWeights) {
  Sequential m = Linear();
  const float nan = std::nanf(""), inf = INFINITY;
  ExpectRefused(m, optimizers::SGD({.learning_rate = nan}),
                "SGD learning_rate must be finite and >= 0, got nan");
  ExpectRefused(m, optimizers::SGD({.learning_rate = -inf}),
                "learning_rate must be finite and >= 0, got -inf");
  ExpectRefused(m, optimizers::SGD({.momentum = 1.5f}),
                "momentum must be in [0, 1], got 1.5");
  ExpectRefused(m, optimizers::SGD({.momentum = nan}), "momentum");
  ExpectRefused(m, optimizers::SGD({.momentum = -0.25f}), "momentum");
  EXPECT_TRUE(m.Compile({.optimizer = optimizers::SGD({.momentum = 1.f}),
                         .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
}

// --- weights never share a buffer with the caller ---

TEST_F(SequentialTest, EditingAGetWeightsTensorDoesNotChangeTheModel) {
  Sequential m = Mlp();
  std::vector<Tensor> w = m.GetWeights();
  const std::vector<Tensor> before = m.GetWeights();
  for (float& v : w[0].mutable_data<float>()) v = 42.f;
  EXPECT_TRUE(SameWeights(m.GetWeights(), before));
}

TEST_F(SequentialTest, TrainingDoesNotChangeTensorsGetWeightsReturned) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(64, 10, 3, 1);
  std::vector<Tensor> held = m.GetWeights();
  std::vector<std::vector<float>> values;
  for (const Tensor& t : held) {
    values.emplace_back(t.data<float>().begin(), t.data<float>().end());
  }
  ASSERT_TRUE(m.Fit(x, y, {.epochs = 2, .verbose = 0}).ok());
  ASSERT_FALSE(SameWeights(m.GetWeights(), held));  // training moved them
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_TRUE(std::equal(values[i].begin(), values[i].end(),
                           held[i].data<float>().begin()))
        << "weight " << i;
  }
}

TEST_F(SequentialTest, EditingATensorGivenToSetWeightsDoesNotChangeTheModel) {
  Sequential m = Mlp();
  std::vector<Tensor> mine;
  for (const Tensor& t : m.GetWeights()) {
    mine.push_back(Tensor::Zeros(DT_FLOAT, t.shape()).value());
  }
  ASSERT_TRUE(m.SetWeights(mine).ok());
  const std::vector<Tensor> set = m.GetWeights();
  for (float& v : mine[0].mutable_data<float>()) v = 42.f;
  EXPECT_TRUE(SameWeights(m.GetWeights(), set));
}

}  // namespace
}  // namespace graphgc

namespace graphgc {
namespace {

// Graph's header: what a graph hands out may outlive it, to be destroyed.
TEST(SequentialLifetime, AModelMayBeDroppedAfterItsGraph) {
  auto g = std::make_unique<Graph>();
  auto model = std::make_unique<Sequential>(
      Sequential::Create({layers::Input({3}), layers::Dense(2)},
                         {.graph = g.get()})
          .value());
  ASSERT_TRUE(model
                  ->Compile({.optimizer = optimizers::Adam(),
                             .loss = losses::MeanSquaredError()})
                  .ok());
  g.reset();
  model.reset();
}

// --- Summary ---

TEST_F(SequentialTest, SummaryPrintsKerasTableOfLayersShapesAndParams) {
  Sequential m =
      Sequential::Create({layers::Input({8, 8, 1}), layers::Conv2D(8, {3, 3}),
                          layers::MaxPooling2D({2, 2}), layers::Flatten(),
                          layers::Dropout(0.5f), layers::Dense(10)},
                         {.graph = &g_})
          .value();
  EXPECT_EQ(
      m.Summary(),
      "Model: \"sequential\"\n"
      "_________________________________________________________________\n"
      "Layer (type)                 Output Shape              Param #\n"
      "=================================================================\n"
      "conv2d (Conv2D)              (None, 6, 6, 8)           80\n"
      "_________________________________________________________________\n"
      "max_pooling2d (MaxPooling2D) (None, 3, 3, 8)           0\n"
      "_________________________________________________________________\n"
      "flatten (Flatten)            (None, 72)                0\n"
      "_________________________________________________________________\n"
      "dropout (Dropout)            (None, 72)                0\n"
      "_________________________________________________________________\n"
      "dense (Dense)                (None, 10)                730\n"
      "=================================================================\n"
      "Total params: 810\n"
      "Trainable params: 810\n"
      "Non-trainable params: 0\n"
      "_________________________________________________________________\n");
}

TEST_F(SequentialTest, SummaryCountsMovingStatisticsAsNonTrainable) {
  Sequential m =
      Sequential::Create({layers::Input({1000}), layers::BatchNormalization(),
                          layers::Dense(2)},
                         {.name = "bn", .graph = &g_})
          .value();
  // A name too long for its column continues on the next line.
  EXPECT_EQ(
      m.Summary(),
      "Model: \"bn\"\n"
      "_________________________________________________________________\n"
      "Layer (type)                 Output Shape              Param #\n"
      "=================================================================\n"
      "batch_normalization (BatchNo (None, 1000)              4000\n"
      "rmalization)\n"
      "_________________________________________________________________\n"
      "dense (Dense)                (None, 2)                 2002\n"
      "=================================================================\n"
      "Total params: 6,002\n"
      "Trainable params: 4,002\n"
      "Non-trainable params: 2,000\n"
      "_________________________________________________________________\n");
}

TEST_F(SequentialTest, SummaryOfAMovedFromModelIsEmpty) {
  Sequential m = Linear();
  Sequential taken = std::move(m);
  EXPECT_EQ(m.Summary(), "");
}

// Input(1) -> Dense(1, no bias), compiled with `optimizer` and MSE, w = 1.
Sequential OneWeight(Graph& g, Optimizer optimizer) {
  Sequential m = Sequential::Create({layers::Input({1}),
                                     layers::Dense(1, {.use_bias = false})},
                                    {.graph = &g})
                     .value();
  EXPECT_TRUE(
      m.Compile({.optimizer = optimizer, .loss = losses::MeanSquaredError()})
          .ok());
  EXPECT_TRUE(m.SetWeights({Floats({1, 1}, {1.0f})}).ok());
  return m;
}

float OnlyWeight(const Sequential& m) {
  return m.GetWeights()[0].data<float>()[0];
}

TEST_F(SequentialTest, LearningRateStartsAtTheOptimizersRate) {
  Sequential adam = Mlp();
  EXPECT_FLOAT_EQ(adam.learning_rate().value(), 0.001f);
  Sequential sgd = OneWeight(g_, optimizers::SGD({.learning_rate = 0.25f}));
  EXPECT_FLOAT_EQ(sgd.learning_rate().value(), 0.25f);
}

TEST_F(SequentialTest, SgdStepUsesTheRateSetBetweenEpochs) {
  Sequential m = OneWeight(g_, optimizers::SGD({.learning_rate = 0.1f}));
  Tensor x = Floats({1, 1}, {1.0f}), t = Floats({1, 1}, {0.0f});
  ASSERT_TRUE(m.Fit(x, t, {.batch_size = 1, .verbose = 0}).ok());
  EXPECT_NEAR(OnlyWeight(m), 0.8f, 1e-6);  // g = 2w = 2: 1 - 0.1 * 2
  ASSERT_TRUE(m.SetLearningRate(0.05f).ok());
  ASSERT_TRUE(m.Fit(x, t, {.batch_size = 1, .verbose = 0}).ok());
  EXPECT_NEAR(OnlyWeight(m), 0.72f, 1e-6);  // g = 1.6: 0.8 - 0.05 * 1.6
}

TEST_F(SequentialTest, SgdWithMomentumReadsTheRateVariableToo) {
  Sequential m =
      OneWeight(g_, optimizers::SGD({.learning_rate = 0.1f, .momentum = 0.9f}));
  ASSERT_TRUE(m.SetLearningRate(0.f).ok());
  Tensor x = Floats({1, 1}, {1.0f}), t = Floats({1, 1}, {0.0f});
  ASSERT_TRUE(m.Fit(x, t, {.batch_size = 1, .verbose = 0}).ok());
  EXPECT_EQ(OnlyWeight(m), 1.0f);
}

TEST_F(SequentialTest, AdamStepUsesTheRateSetBetweenEpochs) {
  Sequential m = OneWeight(g_, optimizers::Adam());
  Tensor x = Floats({1, 1}, {1.0f}), t = Floats({1, 1}, {0.0f});
  ASSERT_TRUE(m.SetLearningRate(0.f).ok());
  ASSERT_TRUE(m.Fit(x, t, {.batch_size = 1, .verbose = 0}).ok());
  EXPECT_EQ(OnlyWeight(m), 1.0f);
  ASSERT_TRUE(m.SetLearningRate(0.01f).ok());
  ASSERT_TRUE(m.Fit(x, t, {.batch_size = 1, .verbose = 0}).ok());
  // Step 2 (g = 2 both times): the bias-corrected m / sqrt(v) is 2 / 2, so
  // w moves by the rate itself.
  EXPECT_NEAR(OnlyWeight(m), 1.0f - 0.01f, 1e-5);
}

TEST_F(SequentialTest, SetLearningRateBuildsNothing) {
  Sequential m = OneWeight(g_, optimizers::SGD({.learning_rate = 0.1f}));
  Tensor x = Floats({1, 1}, {1.0f}), t = Floats({1, 1}, {0.0f});
  ASSERT_TRUE(m.Fit(x, t, {.batch_size = 1, .verbose = 0}).ok());
  g_.Collect();
  const int64_t nodes = g_.num_nodes();
  ASSERT_TRUE(m.SetLearningRate(0.05f).ok());
  EXPECT_EQ(g_.num_nodes(), nodes);
  ASSERT_TRUE(m.Fit(x, t, {.batch_size = 1, .verbose = 0}).ok());
  g_.Collect();
  EXPECT_EQ(g_.num_nodes(), nodes);
}

TEST_F(SequentialTest, SetLearningRateRefusesNegativeOrNonFiniteRates) {
  Sequential m = OneWeight(g_, optimizers::SGD({.learning_rate = 0.1f}));
  for (float bad : {-0.1f, std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity()}) {
    absl::Status s = m.SetLearningRate(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(Mentions(s, "learning_rate")) << s;
  }
  EXPECT_FLOAT_EQ(m.learning_rate().value(), 0.1f);
}

TEST_F(SequentialTest, LearningRateBeforeCompileIsRefused) {
  Sequential m = Linear();
  EXPECT_EQ(m.learning_rate().status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(m.SetLearningRate(0.1f).code(),
            absl::StatusCode::kFailedPrecondition);
}

// Calls StopTraining at the end of epoch `epoch`, or of batch `batch` of
// the first epoch; counts the hooks it sees.
class StopAt : public Callback {
 public:
  StopAt(int epoch, int64_t batch) : epoch_(epoch), batch_(batch) {}
  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo&) override {
    model_ = &model;
    return absl::OkStatus();
  }
  absl::Status OnBatchEnd(int64_t batch, const Logs&) override {
    ++batches;
    if (epochs == 0 && batch == batch_) Sequential(*model_).StopTraining();
    return absl::OkStatus();
  }
  absl::Status OnEpochEnd(int epoch, const Logs&) override {
    ++epochs;
    if (epoch == epoch_) Sequential(*model_).StopTraining();
    return absl::OkStatus();
  }
  absl::Status OnTrainEnd(const Logs&) override {
    ++train_ends;
    return absl::OkStatus();
  }
  int epochs = 0, train_ends = 0;
  int64_t batches = 0;

 private:
  int epoch_;
  int64_t batch_;
  const Sequential* model_ = nullptr;
};

TEST_F(SequentialTest, StopTrainingAtAnEpochEndEndsTheFitThere) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(40, 10, 3, 1);
  auto stop = std::make_shared<StopAt>(/*epoch=*/1, /*batch=*/-1);
  History h =
      m.Fit(x, y,
            {.epochs = 5, .batch_size = 10, .verbose = 0, .callbacks = {stop}})
          .value();
  EXPECT_EQ(h.epoch.size(), 2u);
  EXPECT_EQ(h.values("loss").size(), 2u);
  EXPECT_EQ(stop->batches, 8);
  EXPECT_EQ(stop->train_ends, 1);
  EXPECT_TRUE(m.stop_training());
}

TEST_F(SequentialTest, StopTrainingAtABatchEndEndsThatEpochAfterIt) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(40, 10, 3, 1);
  auto stop = std::make_shared<StopAt>(/*epoch=*/-1, /*batch=*/1);
  History h = m.Fit(x, y,
                    {.epochs = 5,
                     .batch_size = 10,
                     .verbose = 0,
                     .callbacks = {stop},
                     .validation_data = std::make_pair(x, y)})
                  .value();
  EXPECT_EQ(stop->batches, 2);
  EXPECT_EQ(stop->epochs, 1);  // the cut epoch still ends, validated
  ASSERT_EQ(h.epoch.size(), 1u);
  EXPECT_EQ(h.values("val_loss").size(), 1u);
  EXPECT_TRUE(std::isfinite(h.values("loss")[0]));
}

TEST_F(SequentialTest, FitClearsAStopAskedForBeforeIt) {
  Sequential m = Mlp();
  auto [x, y] = RandomData(40, 10, 3, 1);
  m.StopTraining();
  History h = m.Fit(x, y, {.epochs = 3, .verbose = 0}).value();
  EXPECT_EQ(h.epoch.size(), 3u);
  EXPECT_FALSE(m.stop_training());
}

}  // namespace
}  // namespace graphgc
