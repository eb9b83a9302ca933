// Tests of models/callbacks/checkpoint.h: ModelCheckpoint.
#include "models/callbacks/checkpoint.h"

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
#include "tests/testing/file_bytes.h"

namespace graphgc {
namespace {

// WatchingCallbackTest with an empty directory dir_ for checkpoints.
class CheckpointTest : public WatchingCallbackTest {
 protected:
  void SetUp() override {
    WatchingCallbackTest::SetUp();
    dir_ = TestTempPath(".ckpt");
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    WatchingCallbackTest::TearDown();
  }
  // The names of the entries of dir_.
  std::set<std::string> Entries() const {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
      out.insert(e.path().filename().string());
    }
    return out;
  }
  std::shared_ptr<callbacks::ModelCheckpoint> Checkpoint(
      callbacks::ModelCheckpointOptions options) {
    auto checkpoint = callbacks::ModelCheckpoint::Create(std::move(options));
    EXPECT_TRUE(checkpoint.ok()) << checkpoint.status();
    return checkpoint.ok() ? *checkpoint : nullptr;
  }
  std::string dir_;
};

TEST_F(CheckpointTest, SavesEveryEpochToTheFormattedPath) {
  auto checkpoint =
      Checkpoint({.filepath = dir_ + "/ckpt-{epoch:02d}-{loss:.2f}"});
  RecordWeights* record = new RecordWeights;
  std::shared_ptr<Callback> recorder(record);
  History h =
      model_
          .Fit(x_, y_,
               {.epochs = 3, .verbose = 0, .callbacks = {checkpoint, recorder}})
          .value();
  std::set<std::string> expected;
  for (int e = 0; e < 3; ++e) {
    expected.insert(
        absl::StrFormat("ckpt-%02d-%.2f", e + 1, h.values("loss")[e]));
  }
  ASSERT_EQ(Entries(), expected);
  int e = 0;
  for (const std::string& name : expected) {  // sorted: epoch order
    Sequential saved = LoadModel(dir_ + "/" + name, {.graph = &g_}).value();
    EXPECT_TRUE(SameWeights(saved.GetWeights(), record->weights[e])) << name;
    ++e;
  }
}

TEST_F(CheckpointTest, FormatsEpochLogValuesAndLiteralBraces) {
  auto checkpoint = Checkpoint(
      {.filepath = "m{{x}}-{epoch}-{epoch:d}-{epoch:03d}-{loss}-{loss:.3f}"});
  EXPECT_EQ(checkpoint->FormatPath(6, {{"loss", 0.5f}}).value(),
            "m{x}-7-7-007-0.5-0.500");
  EXPECT_EQ(checkpoint->FormatPath(0, {{"loss", 0.1f}}).value(),
            "m{x}-1-1-001-0.10000000149011612-0.100");
}

TEST_F(CheckpointTest, SaveBestOnlySavesOnlyWhenTheMonitorImproves) {
  auto checkpoint =
      Checkpoint({.filepath = dir_ + "/best-{epoch}", .save_best_only = true});
  Epochs(
      *checkpoint, "val_loss",
      {1.0f, 0.9f, 0.95f, std::numeric_limits<float>::quiet_NaN(), 0.9f, 0.5f});
  EXPECT_EQ(Entries(), (std::set<std::string>{"best-1", "best-2", "best-6"}));
  EXPECT_EQ(checkpoint->best(), 0.5f);
}

// ModelCheckpoint's improvement is Keras 3's current < best, no min_delta.
TEST_F(CheckpointTest, SaveBestOnlyCountsTheSmallestDecreaseAndNoEqualValue) {
  auto checkpoint =
      Checkpoint({.filepath = dir_ + "/best-{epoch}", .save_best_only = true});
  const float below = std::nextafter(1.0f, 0.0f);
  Epochs(*checkpoint, "val_loss", {1.0f, below, below});
  EXPECT_EQ(Entries(), (std::set<std::string>{"best-1", "best-2"}));
  EXPECT_EQ(checkpoint->best(), below);
}

TEST_F(CheckpointTest, SaveBestOnlyWithAnAccuracyMonitorKeepsTheHighest) {
  auto checkpoint = Checkpoint({.filepath = dir_ + "/best-{epoch}",
                                .monitor = "accuracy",
                                .save_best_only = true});
  Epochs(*checkpoint, "accuracy", {0.5f, 0.25f, 0.75f});
  EXPECT_EQ(Entries(), (std::set<std::string>{"best-1", "best-3"}));
  EXPECT_EQ(checkpoint->best(), 0.75f);
}

TEST_F(CheckpointTest, SaveBestOnlyInAFitKeepsTheBestEpochsModel) {
  auto checkpoint = Checkpoint({.filepath = dir_ + "/best-{epoch}",
                                .monitor = "loss",
                                .save_best_only = true});
  RecordWeights* record = new RecordWeights;
  std::shared_ptr<Callback> recorder(record);
  History h =
      model_
          .Fit(x_, y_,
               {.epochs = 4, .verbose = 0, .callbacks = {checkpoint, recorder}})
          .value();
  const std::vector<float> loss = h.values("loss");
  std::set<std::string> expected;
  float best = std::numeric_limits<float>::infinity();
  int best_epoch = -1;
  for (int e = 0; e < 4; ++e) {
    if (loss[e] < best) {
      best = loss[e];
      best_epoch = e;
      expected.insert(absl::StrCat("best-", e + 1));
    }
  }
  ASSERT_EQ(Entries(), expected);
  EXPECT_EQ(checkpoint->best(), best);
  Sequential saved =
      LoadModel(absl::StrCat(dir_, "/best-", best_epoch + 1), {.graph = &g_})
          .value();
  EXPECT_TRUE(SameWeights(saved.GetWeights(), record->weights[best_epoch]));
}

TEST_F(CheckpointTest, WeightsOnlyWritesAKerasWeightsFile) {
  auto checkpoint = Checkpoint(
      {.filepath = dir_ + "/w-{epoch}.weights.h5", .save_weights_only = true});
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.epochs = 2, .verbose = 0, .callbacks = {checkpoint}})
          .ok());
  ASSERT_EQ(Entries(),
            (std::set<std::string>{"w-1.weights.h5", "w-2.weights.h5"}));
  const std::string path = dir_ + "/w-2.weights.h5";
  const std::vector<Tensor> weights = model_.GetWeights();
  absl::StatusOr<std::vector<std::vector<Tensor>>> read =
      DecodeKerasWeights(ReadFileBytes(path),
                         {{.path = "layers/dense",
                           .shapes = {weights[0].shape(), weights[1].shape()}}},
                         path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_TRUE(SameWeights((*read)[0], weights));
}

TEST_F(CheckpointTest, WeightsOnlyFileIsWhatSaveWritesAsModelWeights) {
  auto checkpoint = Checkpoint(
      {.filepath = dir_ + "/w.weights.h5", .save_weights_only = true});
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.epochs = 1, .verbose = 0, .callbacks = {checkpoint}})
          .ok());
  ASSERT_TRUE(model_.Save(dir_ + "/model").ok());
  EXPECT_EQ(ReadFileBytes(dir_ + "/w.weights.h5"),
            ReadFileBytes(dir_ + "/model/model.weights.h5"));
}

TEST_F(CheckpointTest, MalformedPlaceholderStopsTheFitNamingIt) {
  const std::pair<std::string, std::string> cases[] = {
      {"/m-{epoch", "{epoch"},
      {"/m-{}", "{}"},
      {"/m-{loss:.2x}", "{loss:.2x}"},
      {"/m-{epoch:3d}", "{epoch:3d}"},
      {"/m-}", "}"},
  };
  for (const auto& [suffix, placeholder] : cases) {
    const std::string filepath = dir_ + suffix;
    auto checkpoint = Checkpoint({.filepath = filepath});
    absl::StatusOr<History> h =
        model_.Fit(x_, y_, {.verbose = 0, .callbacks = {checkpoint}});
    EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument)
        << h.status();
    EXPECT_TRUE(Mentions(h.status(), "'" + placeholder + "'")) << h.status();
    EXPECT_TRUE(Mentions(h.status(), "'" + filepath + "'")) << h.status();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(CheckpointTest, UnknownPlaceholderStopsTheFitNamingTheKeys) {
  const std::string filepath = dir_ + "/m-{val_loss:.2f}";
  absl::StatusOr<History> h = model_.Fit(
      x_, y_,
      {.verbose = 0, .callbacks = {Checkpoint({.filepath = filepath})}});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument)
      << h.status();
  EXPECT_TRUE(Mentions(h.status(), "'{val_loss:.2f}'")) << h.status();
  EXPECT_TRUE(Mentions(h.status(), filepath)) << h.status();
  EXPECT_TRUE(Mentions(h.status(), "available: epoch, accuracy, loss"))
      << h.status();
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(CheckpointTest, SaveBestOnlyWithAMissingMonitorNamesItAndTheKeys) {
  auto checkpoint = Checkpoint({.filepath = dir_ + "/best",
                                .monitor = "val_acc",
                                .save_best_only = true});
  absl::StatusOr<History> h =
      model_.Fit(x_, y_, {.verbose = 0, .callbacks = {checkpoint}});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument)
      << h.status();
  EXPECT_TRUE(Mentions(h.status(), "ModelCheckpoint: monitor 'val_acc'"))
      << h.status();
  EXPECT_TRUE(Mentions(h.status(), "available: accuracy, loss")) << h.status();
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(CheckpointTest, AFailedSaveStopsTheFitNamingThePath) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ + "/file") << "not a directory";
  auto checkpoint = Checkpoint({.filepath = dir_ + "/file/m-{epoch}"});
  absl::StatusOr<History> h = model_.Fit(
      x_, y_, {.epochs = 2, .verbose = 0, .callbacks = {checkpoint}});
  EXPECT_FALSE(h.ok());
  EXPECT_TRUE(Mentions(
      h.status(), "ModelCheckpoint: saving epoch 1 to '" + dir_ + "/file/m-1'"))
      << h.status();
}

TEST(ModelCheckpoint, CreateRefusesAnEmptyFilepathOrOneWithANul) {
  for (const std::string& path : {std::string(), std::string("m\0x", 3)}) {
    absl::Status s =
        callbacks::ModelCheckpoint::Create({.filepath = path}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(s.message(), "ModelCheckpoint filepath"))
        << s;
  }
}

TEST(ModelCheckpoint, CreateRefusesWeightsOnlyWithoutAWeightsH5Name) {
  for (const char* path : {"w.h5", "w", "w.keras"}) {
    absl::Status s = callbacks::ModelCheckpoint::Create(
                         {.filepath = path, .save_weights_only = true})
                         .status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_TRUE(absl::StrContains(s.message(), "\".weights.h5\"")) << s;
  }
}

TEST(ModelCheckpoint, CreateRefusesAnH5NameForTheWholeModel) {
  for (const char* path : {"m.h5", "m.weights.h5"}) {
    absl::Status s =
        callbacks::ModelCheckpoint::Create({.filepath = path}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_TRUE(absl::StrContains(s.message(), "saved as a directory")) << s;
  }
}

TEST(ModelCheckpoint, CreateRefusesSaveBestOnlyWithAnEmptyMonitor) {
  absl::Status s = callbacks::ModelCheckpoint::Create(
                       {.filepath = "m", .monitor = "", .save_best_only = true})
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "ModelCheckpoint: monitor")) << s;
}

TEST_F(CheckpointTest, VerboseSaveBestOnlyPrintsKerasMessages) {
  auto checkpoint = Checkpoint({.filepath = dir_ + "/best-{epoch}",
                                .save_best_only = true,
                                .verbose = 1});
  testing::internal::CaptureStderr();
  Epochs(*checkpoint, "val_loss", {0.5f, 0.7f, 0.25f});
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "\nEpoch 1: val_loss improved from inf to 0.50000, saving model "
            "to " +
                dir_ +
                "/best-1\n"
                "\nEpoch 2: val_loss did not improve from 0.50000\n"
                "\nEpoch 3: val_loss improved from 0.50000 to 0.25000, saving "
                "model to " +
                dir_ + "/best-3\n");
}

TEST_F(CheckpointTest, VerboseWithoutSaveBestOnlyPrintsEachSave) {
  auto checkpoint =
      Checkpoint({.filepath = dir_ + "/ckpt-{epoch}", .verbose = 1});
  testing::internal::CaptureStderr();
  Epochs(*checkpoint, "loss", {0.5f});
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "\nEpoch 1: saving model to " + dir_ + "/ckpt-1\n");
}

TEST_F(CheckpointTest, IsSilentWithoutVerbose) {
  auto checkpoint =
      Checkpoint({.filepath = dir_ + "/best-{epoch}", .save_best_only = true});
  testing::internal::CaptureStderr();
  Epochs(*checkpoint, "val_loss", {0.5f, 0.7f});
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST_F(CheckpointTest, ModeMaxKeepsTheHighestOfAnyMonitor) {
  auto checkpoint = Checkpoint({.filepath = dir_ + "/best-{epoch}",
                                .monitor = "loss",
                                .save_best_only = true,
                                .mode = "max"});
  Epochs(*checkpoint, "loss", {0.5f, 0.25f, 0.75f});
  EXPECT_EQ(Entries(), (std::set<std::string>{"best-1", "best-3"}));
  EXPECT_EQ(checkpoint->best(), 0.75f);
}

TEST_F(CheckpointTest, InitialValueThresholdIsTheFirstBestToBeat) {
  auto checkpoint = Checkpoint({.filepath = dir_ + "/best-{epoch}",
                                .save_best_only = true,
                                .initial_value_threshold = 0.4f,
                                .verbose = 1});
  testing::internal::CaptureStderr();
  Epochs(*checkpoint, "val_loss", {0.5f, 0.25f});
  const std::string text = testing::internal::GetCapturedStderr();
  EXPECT_EQ(Entries(), (std::set<std::string>{"best-2"}));
  EXPECT_TRUE(absl::StrContains(
      text, "\nEpoch 1: val_loss did not improve from 0.40000\n"))
      << text;
}

TEST(ModelCheckpoint, CreateRefusesSaveBestOnlyWithAnUnknownMode) {
  auto checkpoint = callbacks::ModelCheckpoint::Create(
      {.filepath = "m", .save_best_only = true, .mode = "up"});
  EXPECT_EQ(checkpoint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(checkpoint.status().message(), "mode"));
}

}  // namespace
}  // namespace graphgc
