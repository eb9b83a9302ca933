// Tests of models/callbacks/control.h: TerminateOnNaN, EarlyStopping,
// ReduceLROnPlateau.
#include "models/callbacks/control.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "serialize/event.pb.h"
#include "serialize/event_file.h"
#include "serialize/keras_weights.h"
#include "serialize/summary.pb.h"
#include "tests/testing/callback_fixtures.h"

namespace graphgc {
namespace {

class NanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Sequential::Create({layers::Input({2}),
                                 layers::Dense(3, {.activation = "softmax"})},
                                {.graph = &g_})
                 .value();
    ASSERT_TRUE(model_
                    .Compile({.optimizer = optimizers::SGD(),
                              .loss = losses::SparseCategoricalCrossentropy()})
                    .ok());
    std::vector<float> xs(2 * 64, 0.5f);
    xs[2 * 40] = std::numeric_limits<float>::quiet_NaN();  // batch 1
    x_ = Tensor::FromData<float>({64, 2}, xs).value();
    y_ = Tensor::FromData<int32_t>({64}, std::vector<int32_t>(64, 1)).value();
  }
  Graph g_;
  Sequential model_ =
      Sequential::Create({layers::Input({1}), layers::Dense(1)}).value();
  Tensor x_, y_;
};

TEST_F(NanTest, NanInputMakesTheLossNanAndTrainingGoesOn) {
  History h =
      model_.Fit(x_, y_, {.epochs = 2, .shuffle = false, .verbose = 0}).value();
  EXPECT_TRUE(std::isnan(h.values("loss")[0]));
  EXPECT_EQ(h.values("loss").size(), 2u);
}

TEST_F(NanTest, TerminateOnNaNStopsTheFitWithAStatus) {
  absl::StatusOr<History> h =
      model_.Fit(x_, y_,
                 {.epochs = 2,
                  .shuffle = false,
                  .verbose = 0,
                  .callbacks = {callbacks::TerminateOnNaN::Create()}});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(h.status().message().find("batch 1 of epoch 1"), std::string::npos)
      << h.status().message();
}

TEST_F(NanTest, InfiniteWeightsDoNotCrash) {
  std::vector<Tensor> w = model_.GetWeights();
  for (float& v : w[0] = Tensor::Zeros(DT_FLOAT, w[0].shape()).value(),
                  w[0].mutable_data<float>()) {
    v = std::numeric_limits<float>::infinity();
  }
  ASSERT_TRUE(model_.SetWeights(w).ok());
  EXPECT_TRUE(model_.Fit(x_, y_, {.verbose = 0}).ok());
  EXPECT_TRUE(model_.Predict(x_).ok());
}

TEST_F(WatchingCallbackTest, EarlyStoppingStopsAfterPatienceEpochsWithout) {
  auto es = callbacks::EarlyStopping::Create({.patience = 2});
  Epochs(*es, "val_loss", {1.0f, 0.9f, 0.95f});
  EXPECT_FALSE(model_.stop_training());
  EXPECT_EQ(es->wait(), 1);
  ASSERT_TRUE(es->OnEpochEnd(3, {{"val_loss", 0.95f}}).ok());
  EXPECT_TRUE(model_.stop_training());
  EXPECT_EQ(es->stopped_epoch(), 3);
  EXPECT_EQ(es->best_epoch(), 1);
  EXPECT_EQ(es->best(), 0.9f);
}

TEST_F(WatchingCallbackTest, EarlyStoppingWithPatienceZeroNeverStopsEpochOne) {
  auto es = callbacks::EarlyStopping::Create({.monitor = "loss"});
  Epochs(*es, "loss", {1.0f});
  EXPECT_FALSE(model_.stop_training());  // Keras: only when epoch > 0
  ASSERT_TRUE(es->OnEpochEnd(1, {{"loss", 1.0f}}).ok());
  EXPECT_TRUE(model_.stop_training());
}

TEST_F(WatchingCallbackTest, EarlyStoppingIgnoresImprovementsBelowMinDelta) {
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .min_delta = 0.1f, .patience = 1});
  Epochs(*es, "loss", {1.0f, 0.95f});
  EXPECT_TRUE(model_.stop_training());
  EXPECT_EQ(es->best(), 1.0f);
}

// EarlyStopping's improvement is Keras's monitor_op(current - min_delta,
// best): current + |min_delta| < best in min mode (models/callbacks/monitor.h,
// DeltaOn::kCurrent).
TEST_F(WatchingCallbackTest,
       EarlyStoppingValueExactlyMinDeltaBelowTheBestIsNoImprovement) {
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .min_delta = 0.25f, .patience = 5});
  Epochs(*es, "loss", {1.0f, 0.75f});
  EXPECT_EQ(es->best(), 1.0f);
  EXPECT_EQ(es->wait(), 1);
}

TEST_F(WatchingCallbackTest, EarlyStoppingAddsMinDeltaToTheCurrentValue) {
  // -2^-60 + 1 rounds to 1, which is not below the best 1.
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .min_delta = 1.0f, .patience = 5});
  Epochs(*es, "loss", {1.0f, -0x1p-60f});
  EXPECT_EQ(es->best(), 1.0f);
  EXPECT_EQ(es->wait(), 1);
}

TEST_F(WatchingCallbackTest, EarlyStoppingTakesTheMagnitudeOfMinDelta) {
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .min_delta = -0.25f, .patience = 5});
  Epochs(*es, "loss", {1.0f, 0.8f});  // 0.8 + 0.25 is not below 1
  EXPECT_EQ(es->best(), 1.0f);
  EXPECT_EQ(es->wait(), 1);
}

TEST_F(WatchingCallbackTest, EarlyStoppingAutoModeMaximisesAccuracy) {
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "val_accuracy", .patience = 1});
  Epochs(*es, "val_accuracy", {0.5f, 0.6f, 0.7f});
  EXPECT_FALSE(model_.stop_training());
  EXPECT_EQ(es->best(), 0.7f);
}

TEST_F(WatchingCallbackTest, EarlyStoppingNanNeverImproves) {
  auto es =
      callbacks::EarlyStopping::Create({.monitor = "loss", .patience = 1});
  Epochs(*es, "loss", {1.0f, std::numeric_limits<float>::quiet_NaN()});
  EXPECT_TRUE(model_.stop_training());
  EXPECT_EQ(es->best(), 1.0f);
}

TEST_F(WatchingCallbackTest,
       EarlyStoppingEndsTheFitWithOneHistoryEntryPerEpochRun) {
  // An improvement would need the loss to fall by 1e6: none after epoch 1.
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .min_delta = 1e6f, .patience = 2});
  History h =
      model_.Fit(x_, y_, {.epochs = 10, .verbose = 0, .callbacks = {es}})
          .value();
  EXPECT_EQ(es->stopped_epoch(), 2);
  ASSERT_EQ(h.epoch.size(), 3u);
  EXPECT_EQ(h.values("loss").size(), 3u);
  EXPECT_EQ(h.epoch.back(), 2);
}

TEST_F(WatchingCallbackTest, EarlyStoppingRestoresTheBestEpochsWeights) {
  auto record = std::make_shared<RecordWeights>();
  // "max" on the loss: the first epoch is the best and no other improves.
  auto es = callbacks::EarlyStopping::Create({.monitor = "loss",
                                              .patience = 1,
                                              .mode = "max",
                                              .restore_best_weights = true});
  History h = model_
                  .Fit(x_, y_,
                       {.epochs = 10,
                        .shuffle = false,
                        .verbose = 0,
                        .callbacks = {record, es}})
                  .value();
  ASSERT_EQ(h.epoch.size(), 2u);
  ASSERT_EQ(record->weights.size(), 2u);
  EXPECT_FALSE(SameWeights(record->weights[0], record->weights[1]));
  EXPECT_TRUE(SameWeights(model_.GetWeights(), record->weights[0]));
}

TEST_F(WatchingCallbackTest,
       EarlyStoppingRestoresTheBestWeightsAtTrainEndWithoutAStop) {
  auto record = std::make_shared<RecordWeights>();
  auto es = callbacks::EarlyStopping::Create({.monitor = "loss",
                                              .patience = 100,
                                              .mode = "max",
                                              .restore_best_weights = true});
  History h = model_
                  .Fit(x_, y_,
                       {.epochs = 3,
                        .shuffle = false,
                        .verbose = 0,
                        .callbacks = {record, es}})
                  .value();
  EXPECT_EQ(h.epoch.size(), 3u);
  EXPECT_EQ(es->stopped_epoch(), 0);
  EXPECT_TRUE(SameWeights(model_.GetWeights(), record->weights[0]));
}

TEST_F(WatchingCallbackTest, EarlyStoppingWithAMissingMonitorNamesTheKeys) {
  auto es = callbacks::EarlyStopping::Create();  // val_loss, no validation
  absl::StatusOr<History> h =
      model_.Fit(x_, y_, {.epochs = 3, .verbose = 0, .callbacks = {es}});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(h.status(), "'val_loss'")) << h.status();
  EXPECT_TRUE(Mentions(h.status(), "available: accuracy, loss")) << h.status();
}

TEST_F(WatchingCallbackTest, EarlyStoppingBadOptionsAreRefusedBeforeTraining) {
  const std::vector<Tensor> before = model_.GetWeights();
  const callbacks::EarlyStoppingOptions bad[] = {
      {.patience = -1},
      {.min_delta = std::numeric_limits<float>::quiet_NaN()},
      {.mode = "maximum"},
      {.monitor = ""},
  };
  for (const auto& options : bad) {
    absl::StatusOr<History> h =
        model_.Fit(x_, y_,
                   {.verbose = 0,
                    .callbacks = {callbacks::EarlyStopping::Create(options)}});
    EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument)
        << h.status();
    EXPECT_TRUE(Mentions(h.status(), "EarlyStopping")) << h.status();
  }
  EXPECT_TRUE(SameWeights(model_.GetWeights(), before));
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauLowersTheRateAfterPatience) {
  auto reduce =
      callbacks::ReduceLROnPlateau::Create({.factor = 0.5f, .patience = 2});
  Epochs(*reduce, "val_loss", {1.0f, 1.0f});
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.1f);
  ASSERT_TRUE(reduce->OnEpochEnd(2, {{"val_loss", 1.0f}}).ok());
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.05f);
  EXPECT_EQ(reduce->reductions(), 1);
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauNeverGoesBelowMinLr) {
  auto reduce = callbacks::ReduceLROnPlateau::Create(
      {.monitor = "loss", .patience = 1, .min_lr = 0.03f});
  Epochs(*reduce, "loss", {1.0f, 1.0f, 1.0f, 1.0f});
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.03f);
  EXPECT_EQ(reduce->reductions(), 1);
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauWaitsOutItsCooldown) {
  auto reduce = callbacks::ReduceLROnPlateau::Create(
      {.monitor = "loss", .factor = 0.5f, .patience = 1, .cooldown = 2});
  // Epoch 0 sets the best, 1 reduces. As in Keras the cooldown is counted
  // down before it is checked: epoch 2 counts it to 1 and is skipped, epoch
  // 3 counts it to 0 and may reduce again.
  Epochs(*reduce, "loss", {1.0f, 1.0f, 1.0f});
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.05f);
  ASSERT_TRUE(reduce->OnEpochEnd(3, {{"loss", 1.0f}}).ok());
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.025f);
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauMinDeltaDecidesImprovement) {
  auto reduce = callbacks::ReduceLROnPlateau::Create(
      {.monitor = "loss", .factor = 0.5f, .patience = 1, .min_delta = 0.1f});
  Epochs(*reduce, "loss", {1.0f, 0.85f});  // improves by more than 0.1
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.1f);
  ASSERT_TRUE(reduce->OnEpochEnd(2, {{"loss", 0.8f}}).ok());  // by 0.05
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.05f);
}

// ReduceLROnPlateau's improvement is Keras's current < best - min_delta in
// min mode, min_delta as given (models/callbacks/monitor.h, DeltaOn::kBest).
TEST_F(WatchingCallbackTest,
       ReduceLROnPlateauValueExactlyMinDeltaBelowTheBestIsNoImprovement) {
  auto reduce = callbacks::ReduceLROnPlateau::Create(
      {.monitor = "loss", .factor = 0.5f, .patience = 1, .min_delta = 0.25f});
  Epochs(*reduce, "loss", {1.0f, 0.75f});
  EXPECT_EQ(reduce->reductions(), 1);
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.05f);
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauSubtractsMinDeltaFromTheBest) {
  // -2^-60 < 1 - 1: an improvement (EarlyStopping's rule says it is not).
  auto reduce = callbacks::ReduceLROnPlateau::Create(
      {.monitor = "loss", .factor = 0.5f, .patience = 1, .min_delta = 1.0f});
  Epochs(*reduce, "loss", {1.0f, -0x1p-60f});
  EXPECT_EQ(reduce->reductions(), 0);
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.1f);
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauKeepsTheSignOfMinDelta) {
  // 1.2 < 1 - (-0.25): an improvement (EarlyStopping's rule says it is not).
  auto reduce = callbacks::ReduceLROnPlateau::Create(
      {.monitor = "loss", .factor = 0.5f, .patience = 1, .min_delta = -0.25f});
  Epochs(*reduce, "loss", {1.0f, 1.2f});
  EXPECT_EQ(reduce->reductions(), 0);
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.1f);
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauChangesTheRateDuringAFit) {
  auto reduce = callbacks::ReduceLROnPlateau::Create(
      {.monitor = "loss", .factor = 0.1f, .patience = 1, .min_delta = 1e6f});
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.epochs = 3, .verbose = 0, .callbacks = {reduce}})
          .ok());
  EXPECT_EQ(reduce->reductions(), 2);
  EXPECT_NEAR(model_.learning_rate().value(), 0.001f, 1e-9);
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauBadOptionsAreRefused) {
  const callbacks::ReduceLROnPlateauOptions bad[] = {
      {.factor = 1.0f},
      {.factor = std::numeric_limits<float>::quiet_NaN()},
      {.patience = -1},
      {.mode = "up"},
      {.min_delta = std::numeric_limits<float>::quiet_NaN()},
      {.cooldown = -1},
      {.min_lr = -1.f},
  };
  for (const auto& options : bad) {
    absl::StatusOr<History> h = model_.Fit(
        x_, y_,
        {.verbose = 0,
         .callbacks = {callbacks::ReduceLROnPlateau::Create(options)}});
    EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument)
        << h.status();
    EXPECT_TRUE(Mentions(h.status(), "ReduceLROnPlateau")) << h.status();
  }
  EXPECT_FLOAT_EQ(model_.learning_rate().value(), 0.1f);
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauWithAMissingMonitorNamesIt) {
  auto reduce = callbacks::ReduceLROnPlateau::Create({.monitor = "val_acc"});
  absl::StatusOr<History> h =
      model_.Fit(x_, y_, {.verbose = 0, .callbacks = {reduce}});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(h.status(), "'val_acc'")) << h.status();
  EXPECT_TRUE(Mentions(h.status(), "validation_data")) << h.status();
}

TEST_F(WatchingCallbackTest, EarlyStoppingVerbosePrintsKerasStopMessage) {
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .patience = 1, .verbose = 1});
  Epochs(*es, "loss", {1.0f, 1.0f});
  testing::internal::CaptureStderr();
  ASSERT_TRUE(es->OnTrainEnd({}).ok());
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "Epoch 2: early stopping\n");
}

TEST_F(WatchingCallbackTest, EarlyStoppingVerboseSaysWhichEpochItRestores) {
  auto es = callbacks::EarlyStopping::Create({.monitor = "loss",
                                              .patience = 1,
                                              .restore_best_weights = true,
                                              .verbose = 1});
  Epochs(*es, "loss", {1.0f, 0.5f, 0.7f});
  testing::internal::CaptureStderr();
  ASSERT_TRUE(es->OnTrainEnd({}).ok());
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "Epoch 3: early stopping\n"
            "Restoring model weights from the end of the best epoch: 2.\n");
}

TEST_F(WatchingCallbackTest, EarlyStoppingIsSilentWithoutVerbose) {
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .patience = 1, .restore_best_weights = true});
  Epochs(*es, "loss", {1.0f, 1.0f});
  testing::internal::CaptureStderr();
  ASSERT_TRUE(es->OnTrainEnd({}).ok());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// Keras: improvements that do not beat the baseline do not restart the
// wait, so a plateau after them stops the fit at once.
TEST_F(WatchingCallbackTest, EarlyStoppingBaselineKeepsTheWaitRunning) {
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .patience = 2, .baseline = 0.5f});
  Epochs(*es, "loss", {0.9f, 0.8f, 0.7f, 0.75f});
  EXPECT_TRUE(model_.stop_training());
  EXPECT_EQ(es->stopped_epoch(), 3);
  EXPECT_EQ(es->best(), 0.7f);
}

TEST_F(WatchingCallbackTest, EarlyStoppingWithoutBaselineRestartsTheWait) {
  auto es =
      callbacks::EarlyStopping::Create({.monitor = "loss", .patience = 2});
  Epochs(*es, "loss", {0.9f, 0.8f, 0.7f, 0.75f});
  EXPECT_FALSE(model_.stop_training());
  EXPECT_EQ(es->wait(), 1);
}

TEST_F(WatchingCallbackTest, EarlyStoppingBeatingTheBaselineRestartsTheWait) {
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .patience = 2, .baseline = 0.5f});
  Epochs(*es, "loss", {0.9f, 0.4f, 0.45f});
  EXPECT_FALSE(model_.stop_training());
  EXPECT_EQ(es->wait(), 1);
}

TEST_F(WatchingCallbackTest, EarlyStoppingWatchesNothingBeforeStartFromEpoch) {
  auto es = callbacks::EarlyStopping::Create(
      {.monitor = "loss", .start_from_epoch = 2});
  Epochs(*es, "loss", {1.0f, 1.0f, 1.0f});
  EXPECT_FALSE(model_.stop_training());  // without it: stopped at epoch 1
  EXPECT_EQ(es->best_epoch(), 2);
  ASSERT_TRUE(es->OnEpochEnd(3, {{"loss", 1.0f}}).ok());
  EXPECT_TRUE(model_.stop_training());
}

TEST_F(WatchingCallbackTest, EarlyStoppingRefusesANegativeStartFromEpoch) {
  auto es = callbacks::EarlyStopping::Create({.start_from_epoch = -1});
  const absl::Status s = es->Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "start_from_epoch must be >= 0, got -1")) << s;
}

// The new rate is Keras's Python float arithmetic: float32 0.1 * 0.1.
TEST_F(WatchingCallbackTest, ReduceLROnPlateauVerbosePrintsTheNewRate) {
  auto reduce = callbacks::ReduceLROnPlateau::Create(
      {.monitor = "loss", .patience = 1, .verbose = 1});
  testing::internal::CaptureStderr();
  Epochs(*reduce, "loss", {1.0f, 1.0f});
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "\nEpoch 2: ReduceLROnPlateau reducing learning rate to "
            "0.010000000149011612.\n");
}

TEST_F(WatchingCallbackTest, ReduceLROnPlateauIsSilentWithoutVerbose) {
  auto reduce =
      callbacks::ReduceLROnPlateau::Create({.monitor = "loss", .patience = 1});
  testing::internal::CaptureStderr();
  Epochs(*reduce, "loss", {1.0f, 1.0f});
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(reduce->reductions(), 1);
}

}  // namespace
}  // namespace graphgc
