// Save writes a compiled model's optimizer state under "optimizer/vars" in
// Keras's order, and LoadModel restores it, so training continues where it
// left off (models/optimizer_state.h).
#include "models/optimizer_state.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "serialize/keras_weights.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

Tensor X() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xs(64 * 4);
  for (float& v : xs) v = u(rng);
  return Tensor::FromData<float>({64, 4}, xs).value();
}

Tensor Y() {
  std::vector<int32_t> ys(64);
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<int32_t>(i % 3);
  return Tensor::FromData<int32_t>({64}, ys).value();
}

// 64 rows in batches of 16: 4 steps an epoch, in order.
FitOptions OneEpoch() {
  return {.batch_size = 16, .shuffle = false, .verbose = 0};
}

// Input(4) -> Dense(8, relu) -> Dense(3, softmax) compiled with
// `optimizer`, trained one epoch.
Sequential TrainedModel(Graph& g, Optimizer optimizer) {
  Sequential m =
      Sequential::Create(
          {layers::Input({4}), layers::Dense(8, {.activation = "relu"}),
           layers::Dense(3, {.activation = "softmax"})},
          {.graph = &g})
          .value();
  EXPECT_TRUE(m.Compile({.optimizer = std::move(optimizer),
                         .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
  EXPECT_TRUE(m.Fit(X(), Y(), OneEpoch()).ok());
  return m;
}

// The largest difference between the two models' weights.
float MaxDifference(const Sequential& a, const Sequential& b) {
  const std::vector<Tensor> wa = a.GetWeights();
  const std::vector<Tensor> wb = b.GetWeights();
  EXPECT_EQ(wa.size(), wb.size());
  float most = 0;
  for (size_t i = 0; i < wa.size() && i < wb.size(); ++i) {
    for (int64_t k = 0; k < wa[i].num_elements(); ++k) {
      most = std::max(
          most, std::abs(wa[i].data<float>()[k] - wb[i].data<float>()[k]));
    }
  }
  return most;
}

// Saves a model trained with `optimizer`, loads it, fits both one more
// epoch: how far apart their weights end.
float DriftAfterReloading(Optimizer optimizer) {
  Graph g;
  Sequential m = TrainedModel(g, std::move(optimizer));
  const std::string dir = TestTempPath();
  EXPECT_TRUE(m.Save(dir).ok());
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g});
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return 1e9f;
  EXPECT_TRUE(m.Fit(X(), Y(), OneEpoch()).ok());
  EXPECT_TRUE(loaded->Fit(X(), Y(), OneEpoch()).ok());
  return MaxDifference(m, *loaded);
}

TEST(OptimizerState, AdamContinuesWhereItLeftOff) {
  EXPECT_LT(DriftAfterReloading(optimizers::Adam({.learning_rate = 0.05f})),
            1e-5f);
}

TEST(OptimizerState, SgdWithMomentumContinuesWhereItLeftOff) {
  EXPECT_LT(DriftAfterReloading(
                optimizers::SGD({.learning_rate = 0.1f, .momentum = 0.9f})),
            1e-5f);
}

TEST(OptimizerState, IterationsSurviveTheRoundTrip) {
  Graph g;
  Sequential m = TrainedModel(g, optimizers::Adam());
  const std::string dir = TestTempPath();
  ASSERT_TRUE(m.Save(dir).ok());
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->iterations().value(), 4);
}

TEST(OptimizerState, TheLayoutIsKerasIterationsLearningRateThenSlotsPerWeight) {
  Graph g;
  Sequential m = TrainedModel(g, optimizers::Adam({.learning_rate = 0.05f}));
  const std::string dir = TestTempPath();
  ASSERT_TRUE(m.Save(dir).ok());
  // Adam's build: momentum and velocity of each weight, interleaved.
  LayerWeightsSpec spec{
      .path = "optimizer",
      .shapes = {{}, {}, {4, 8}, {4, 8}, {8}, {8}, {8, 3}, {8, 3}, {3}, {3}},
      .dtypes = {DT_INT64}};
  absl::StatusOr<std::vector<std::vector<Tensor>>> saved = DecodeKerasWeights(
      ReadFileBytes(dir + "/model.weights.h5"), {spec}, "model.weights.h5");
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::vector<Tensor>& vars = (*saved)[0];
  EXPECT_EQ(vars[0].data<int64_t>()[0], 4);  // iterations
  EXPECT_FLOAT_EQ(vars[1].data<float>()[0], 0.05f);
  // A velocity is a mean of squares; the momentum of a gradient is not.
  bool momentum_has_a_negative = false;
  for (float v : vars[2].data<float>()) momentum_has_a_negative |= v < 0;
  EXPECT_TRUE(momentum_has_a_negative);
  for (float v : vars[3].data<float>()) EXPECT_GE(v, 0);
}

TEST(OptimizerState, AScheduleLeavesTheLearningRateOut) {
  Graph g;
  Optimizer sgd = optimizers::SGD();
  sgd.learning_rate_schedule =
      LearningRateSchedule::Create(
          schedules::ExponentialDecay{.initial_learning_rate = 0.1,
                                      .decay_steps = 10,
                                      .decay_rate = 0.5})
          .value();
  Sequential m = TrainedModel(g, sgd);
  const std::string dir = TestTempPath();
  ASSERT_TRUE(m.Save(dir).ok());
  // Plain SGD keeps no slots: iterations alone.
  EXPECT_TRUE(DecodeKerasWeights(
                  ReadFileBytes(dir + "/model.weights.h5"),
                  {{.path = "optimizer", .shapes = {{}}, .dtypes = {DT_INT64}}},
                  "model.weights.h5")
                  .ok());
}

// A saved Adam model whose model.weights.h5 is replaced by `h5`.
std::string AdamSaveWithWeightsFile(const std::string& h5) {
  Graph g;
  Sequential m = TrainedModel(g, optimizers::Adam());
  const std::string dir = TestTempPath();
  EXPECT_TRUE(m.Save(dir).ok());
  WriteFileBytes(dir + "/model.weights.h5", h5);
  return dir;
}

TEST(OptimizerState, AFileWithoutOptimizerStateLoadsWithAFreshOptimizer) {
  Graph g;
  Sequential m = TrainedModel(g, optimizers::Adam());
  const std::string saved = TestTempPath();
  ASSERT_TRUE(m.Save(saved).ok());
  // An uncompiled model's weights file holds the layers alone, as Save
  // wrote it before it wrote the optimizer's state.
  absl::StatusOr<Sequential> uncompiled =
      LoadModel(saved, {.graph = &g, .compile = false});
  ASSERT_TRUE(uncompiled.ok()) << uncompiled.status();
  const std::string weights = TestTempPath() + ".weights.h5";
  ASSERT_TRUE(SaveWeights(*uncompiled, weights).ok());
  const std::string dir = AdamSaveWithWeightsFile(ReadFileBytes(weights));
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->iterations().value(), 0);
  EXPECT_EQ(MaxDifference(m, *loaded), 0.f);
}

TEST(OptimizerState, AnotherOptimizersStateLoadsWithAFreshOptimizer) {
  Graph g;
  // SGD with momentum saves 2 + 4 variables; Adam has 2 + 8.
  Sequential sgd = TrainedModel(
      g, optimizers::SGD({.learning_rate = 0.1f, .momentum = 0.9f}));
  const std::string sgd_dir = TestTempPath();
  ASSERT_TRUE(sgd.Save(sgd_dir).ok());
  const std::string dir =
      AdamSaveWithWeightsFile(ReadFileBytes(sgd_dir + "/model.weights.h5"));
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->iterations().value(), 0);
  EXPECT_EQ(MaxDifference(sgd, *loaded), 0.f);
}

TEST(OptimizerState, StateOfOtherShapesLoadsWithAFreshOptimizer) {
  Graph g;
  Sequential m = TrainedModel(g, optimizers::Adam());
  const std::vector<Tensor> w = m.GetWeights();
  // The right count of variables, the slots of the first kernel
  // transposed and the iteration count a float.
  std::vector<Tensor> state = {
      Tensor::Scalar<float>(4), Tensor::Scalar<float>(0.001f),
      Tensor::FromData<float>({8, 4}, std::vector<float>(32, 1)).value(),
      Tensor::FromData<float>({8, 4}, std::vector<float>(32, 1)).value()};
  for (size_t i = 1; i < w.size(); ++i) {
    state.push_back(w[i]);
    state.push_back(w[i]);
  }
  absl::StatusOr<std::string> h5 =
      EncodeKerasWeights({{.path = "layers/dense", .values = {w[0], w[1]}},
                          {.path = "layers/dense_1", .values = {w[2], w[3]}},
                          {.path = "optimizer", .values = state}});
  ASSERT_TRUE(h5.ok()) << h5.status();
  const std::string dir = AdamSaveWithWeightsFile(*h5);
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->iterations().value(), 0);
  EXPECT_EQ(MaxDifference(m, *loaded), 0.f);
}

TEST(OptimizerState, LoadingUncompiledReadsNoOptimizerState) {
  Graph g;
  Sequential m = TrainedModel(g, optimizers::Adam());
  const std::string dir = TestTempPath();
  ASSERT_TRUE(m.Save(dir).ok());
  absl::StatusOr<Sequential> loaded =
      LoadModel(dir, {.graph = &g, .compile = false});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->compiled());
}

}  // namespace
}  // namespace graphgc
