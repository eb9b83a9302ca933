// models/functional.h: symbolic values, layer calls on them and Functional
// models built, trained, summarised and collected through the engine.
#include "models/functional.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

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

TEST_F(FunctionalTest, SeveralInputsAreNotImplementedYet) {
  KerasTensor a = Input({2});
  KerasTensor b = Input({2});
  absl::StatusOr<Functional> m =
      Functional::Create({a, b}, {layers::Add()({a, b})}, {.graph = &g_});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented);
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

}  // namespace
}  // namespace graphgc
