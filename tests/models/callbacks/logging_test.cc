// Tests of models/callbacks/logging.h: ProgressBar, TensorBoard (its events
// files, a log directory removed mid-run), CSVLogger.
#include "models/callbacks/logging.h"

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

std::string ReadAll(FILE* f) {
  std::rewind(f);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  return out;
}

std::string Cells(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += "━";
  return out;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size())) {
    ++n;
  }
  return n;
}

TEST(ProgressBar, OffATerminalPrintsOneFinalLinePerEpochCountingSteps) {
  Graph g;
  Sequential m =
      Sequential::Create(
          {layers::Input({2}), layers::Dense(2, {.activation = "softmax"})},
          {.graph = &g})
          .value();
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                         .loss = losses::SparseCategoricalCrossentropy(),
                         .metrics = {"accuracy"}})
                  .ok());
  std::vector<float> xs(2 * 100, 0.5f);
  std::vector<int32_t> ys(100, 1);
  Tensor x = Tensor::FromData<float>({100, 2}, xs).value();
  Tensor y = Tensor::FromData<int32_t>({100}, ys).value();
  FILE* out = std::tmpfile();
  auto bar = callbacks::ProgressBar::Create({.out = out, .redraw = 0});
  ASSERT_TRUE(
      m.Fit(x, y, {.epochs = 2, .verbose = 0, .callbacks = {bar}}).ok());
  const std::string text = ReadAll(out);
  std::fclose(out);
  // 100 samples in batches of 32: 4 steps.
  const std::string line = "4/4 " + Cells(20) + " ";
  EXPECT_EQ(text.find("Epoch 1/2\n" + line), 0u) << text;
  EXPECT_NE(text.find("\nEpoch 2/2\n" + line), std::string::npos) << text;
  EXPECT_EQ(Count(text, line), 2u) << text;
  EXPECT_EQ(Count(text, "\n"), 4u) << text;
  EXPECT_NE(text.find("/step - accuracy: "), std::string::npos) << text;
  EXPECT_NE(text.find(" - loss: "), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
}

// A progress bar with a clock the test moves, started on epoch 1 of 1 of
// 32 steps, writing to a temporary file.
class ClockedProgressBarTest : public ::testing::Test {
 protected:
  void SetUp() override { out_ = std::tmpfile(); }
  void TearDown() override { std::fclose(out_); }

  std::unique_ptr<callbacks::ProgressBar> Start(int redraw) {
    auto bar =
        std::make_unique<callbacks::ProgressBar>(callbacks::ProgressBarOptions{
            .out = out_, .redraw = redraw, .clock = [this] { return now_; }});
    EXPECT_TRUE(
        bar->OnTrainBegin(model_, {.epochs = 1, .steps_per_epoch = 32}).ok());
    EXPECT_TRUE(bar->OnEpochBegin(0).ok());
    return bar;
  }

  Graph g_;
  Sequential model_ =
      Sequential::Create({layers::Input({1}), layers::Dense(1)}, {.graph = &g_})
          .value();
  absl::Time now_ = absl::UnixEpoch();
  FILE* out_ = nullptr;
};

TEST_F(ClockedProgressBarTest, FinalLineIsKerasThreesFormat) {
  auto bar = Start(0);
  for (int i = 0; i < 32; ++i) {
    now_ += absl::Milliseconds(2);
    ASSERT_TRUE(bar->OnBatchEnd(i, {{"loss", 0.5f}, {"size", 32.f}}).ok());
  }
  ASSERT_TRUE(bar->OnEpochEnd(0, {{"accuracy", 0.91f}, {"loss", 0.27f}}).ok());
  EXPECT_EQ(
      bar->Line(true),
      "32/32 " + Cells(20) + " 0s 2ms/step - accuracy: 0.9100 - loss: 0.2700");
}

TEST_F(ClockedProgressBarTest, VerboseTwoPrintsKerasThreesOneLinePerEpoch) {
  auto bar =
      std::make_unique<callbacks::ProgressBar>(callbacks::ProgressBarOptions{
          .out = out_, .redraw = 0, .clock = [this] { return now_; }});
  ASSERT_TRUE(bar->OnTrainBegin(
                     model_, {.epochs = 1, .steps_per_epoch = 32, .verbose = 2})
                  .ok());
  ASSERT_TRUE(bar->OnEpochBegin(0).ok());
  for (int i = 0; i < 32; ++i) {
    now_ += absl::Milliseconds(2);
    ASSERT_TRUE(bar->OnBatchEnd(i, {{"loss", 0.5f}, {"size", 32.f}}).ok());
  }
  ASSERT_TRUE(bar->OnEpochEnd(0, {{"accuracy", 0.91f}, {"loss", 0.27f}}).ok());
  std::rewind(out_);
  char buf[256] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, out_);
  EXPECT_EQ(std::string(buf, n),
            "Epoch 1/1\n32/32 - 0s - 2ms/step - accuracy: 0.9100 - loss: "
            "0.2700\n");
}

TEST_F(ClockedProgressBarTest, PartialLineShowsStepsAndEta) {
  auto bar = Start(0);
  // The first step (building the step) is left out of the time per step.
  now_ += absl::Seconds(9);
  ASSERT_TRUE(bar->OnBatchEnd(0, {{"loss", 2.5f}, {"size", 32.f}}).ok());
  for (int i = 1; i < 5; ++i) {
    now_ += absl::Seconds(1);
    ASSERT_TRUE(bar->OnBatchEnd(i, {{"loss", 2.5f}, {"size", 32.f}}).ok());
  }
  // 27 steps to go at 1 s each.
  EXPECT_EQ(bar->Line(false),
            " 5/32 " + Cells(20) + " 27s 1s/step - loss: 2.5000");
}

TEST_F(ClockedProgressBarTest, OnATerminalRedrawsAtMostEvery50Milliseconds) {
  auto bar = Start(1);
  for (int i = 0; i < 32; ++i) {
    now_ += absl::Milliseconds(10);
    ASSERT_TRUE(bar->OnBatchEnd(i, {{"loss", 1.f}, {"size", 1.f}}).ok());
  }
  ASSERT_TRUE(bar->OnEpochEnd(0, {{"loss", 1.f}}).ok());
  const std::string text = ReadAll(out_);
  // Batches end at 10, 20, ..., 320 ms: drawn at 10, 60, ..., 310 (7 times),
  // then the final line.
  EXPECT_EQ(Count(text, "\r"), 8u) << text;
  EXPECT_EQ(Count(text, "\n"), 2u) << text;  // "Epoch 1/1" and the final line
  EXPECT_NE(text.find("\x1b[1m 1/32\x1b[0m "), std::string::npos) << text;
  EXPECT_NE(text.find("\x1b[1m32/32\x1b[0m \x1b[32m" + Cells(20)),
            std::string::npos)
      << text;
}

// Removes (and, with `replace_by_file`, replaces by a regular file) a
// directory at the end of the first epoch, before the callbacks after it run.
class RemoveDirAtFirstEpochEnd : public Callback {
 public:
  RemoveDirAtFirstEpochEnd(std::string dir, bool replace_by_file)
      : dir_(std::move(dir)), replace_by_file_(replace_by_file) {}
  absl::Status OnEpochEnd(int epoch, const Logs&) override {
    if (epoch != 0) return absl::OkStatus();
    std::filesystem::remove_all(dir_);
    if (replace_by_file_) std::ofstream(dir_) << "not a directory";
    return absl::OkStatus();
  }

 private:
  std::string dir_;
  bool replace_by_file_;
};

TEST_F(LogDirFaultTest, RemovedMidRunGoesOnInANewReadableFile) {
  auto tensorboard = callbacks::TensorBoard::Create({.log_dir = log_dir_});
  absl::StatusOr<History> h = model_.Fit(
      x_, y_,
      {.epochs = 3,
       .verbose = 0,
       .callbacks = {
           std::make_shared<RemoveDirAtFirstEpochEnd>(log_dir_, false),
           tensorboard}});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(tensorboard->files_reopened(), 1);
  const std::string path = tensorboard->train_path();
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  auto events = EventFileReader::ReadAll(path);
  ASSERT_TRUE(events.ok()) << events.status();
  // file_version, the graph and the keras config again, then epoch_loss of
  // epochs 0, 1 and 2.
  ASSERT_EQ(events->size(), 6u);
  EXPECT_EQ((*events)[0].file_version(), kEventFileVersion);
  EXPECT_TRUE((*events)[1].has_graph_def());
  ASSERT_EQ((*events)[2].summary().value_size(), 1);
  EXPECT_EQ((*events)[2].summary().value(0).tag(), "keras");
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    const proto::Event& e = (*events)[3 + epoch];
    EXPECT_EQ(e.step(), epoch);
    ASSERT_EQ(e.summary().value_size(), 1);
    EXPECT_EQ(e.summary().value(0).tag(), "epoch_loss");
    EXPECT_FLOAT_EQ(e.summary().value(0).simple_value(),
                    h->values("loss")[epoch]);
  }
}

TEST_F(LogDirFaultTest, TensorBoardWritesTheKerasConfigAsTheKerasSummary) {
  auto tensorboard = callbacks::TensorBoard::Create({.log_dir = log_dir_});
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.verbose = 0, .callbacks = {tensorboard}}).ok());
  absl::StatusOr<std::string> config = ModelToJson(model_);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(absl::StrContains(*config, "\"class_name\":\"Sequential\""))
      << *config;
  auto events = EventFileReader::ReadAll(tensorboard->train_path());
  ASSERT_TRUE(events.ok()) << events.status();
  int found = 0;
  for (const proto::Event& e : *events) {
    for (const proto::Summary::Value& v : e.summary().value()) {
      if (v.tag() != "keras") continue;
      ++found;
      EXPECT_EQ(e.step(), 0);
      EXPECT_EQ(v.metadata().plugin_data().plugin_name(), "graph_keras_model");
      EXPECT_EQ(v.metadata().plugin_data().content(), "1");
      EXPECT_EQ(v.tensor().dtype(), proto::DT_STRING);
      EXPECT_EQ(v.tensor().tensor_shape().dim_size(), 0);  // a scalar
      ASSERT_EQ(v.tensor().string_val_size(), 1);
      EXPECT_EQ(v.tensor().string_val(0), *config);
    }
  }
  EXPECT_EQ(found, 1);
}

TEST_F(LogDirFaultTest, TensorBoardKerasSummaryUsesTheGraphsLocalNames) {
  // model_ took "sequential" and "dense" in g_; this one gets "_1" names.
  Sequential second =
      Sequential::Create(
          {layers::Input({2}), layers::Dense(3, {.activation = "softmax"})},
          {.graph = &g_})
          .value();
  ASSERT_TRUE(second
                  .Compile({.optimizer = optimizers::SGD(),
                            .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
  ASSERT_EQ(second.name(), "sequential_1");
  auto first_board = callbacks::TensorBoard::Create({.log_dir = log_dir_});
  auto second_board =
      callbacks::TensorBoard::Create({.log_dir = log_dir_ + "/second"});
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.verbose = 0, .callbacks = {first_board}}).ok());
  ASSERT_TRUE(
      second.Fit(x_, y_, {.verbose = 0, .callbacks = {second_board}}).ok());
  auto keras_config = [](const std::string& path) {
    auto events = EventFileReader::ReadAll(path);
    EXPECT_TRUE(events.ok()) << events.status();
    for (const proto::Event& e : events.value_or(std::vector<proto::Event>())) {
      for (const proto::Summary::Value& v : e.summary().value()) {
        if (v.tag() == "keras") return v.tensor().string_val(0);
      }
    }
    return std::string();
  };
  const std::string first = keras_config(first_board->train_path());
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(keras_config(second_board->train_path()), first);
  EXPECT_TRUE(absl::StrContains(first, "\"name\":\"sequential\"")) << first;
  EXPECT_TRUE(absl::StrContains(first, "\"name\":\"dense\"")) << first;
  EXPECT_EQ(std::filesystem::file_size(second_board->train_path()),
            std::filesystem::file_size(first_board->train_path()));
}

TEST_F(LogDirFaultTest, TensorBoardWithoutWriteGraphWritesNoKerasSummary) {
  auto tensorboard = callbacks::TensorBoard::Create(
      {.log_dir = log_dir_, .write_graph = false});
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.verbose = 0, .callbacks = {tensorboard}}).ok());
  auto events = EventFileReader::ReadAll(tensorboard->train_path());
  ASSERT_TRUE(events.ok()) << events.status();
  for (const proto::Event& e : *events) {
    for (const proto::Summary::Value& v : e.summary().value()) {
      EXPECT_NE(v.tag(), "keras");
    }
  }
}

TEST_F(LogDirFaultTest, ReplacedByAFileStopsTheFitWithAStatusNamingIt) {
  auto tensorboard = callbacks::TensorBoard::Create({.log_dir = log_dir_});
  absl::StatusOr<History> h = model_.Fit(
      x_, y_,
      {.epochs = 3,
       .verbose = 0,
       .callbacks = {std::make_shared<RemoveDirAtFirstEpochEnd>(log_dir_, true),
                     tensorboard}});
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find(log_dir_ + "/train"), std::string::npos)
      << h.status();
  EXPECT_NE(h.status().message().find("removed mid-run"), std::string::npos)
      << h.status();
  // The model is intact and usable after the failed fit.
  EXPECT_TRUE(model_.Predict(x_).ok());
}

TEST(CSVLogger, CreateRefusesAnEmptyPathOrOneWithANul) {
  EXPECT_EQ(callbacks::CSVLogger::Create("").status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status nul =
      callbacks::CSVLogger::Create(std::string("log\0.csv", 8)).status();
  EXPECT_EQ(nul.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(nul.message(), "CSVLogger")) << nul;
}

TEST(CSVLogger, FormatsValuesAsPythonsRepr) {
  using callbacks::CSVLogger;
  EXPECT_EQ(CSVLogger::FormatValue(0.5f), "0.5");
  EXPECT_EQ(CSVLogger::FormatValue(1.0f), "1.0");
  EXPECT_EQ(CSVLogger::FormatValue(0.0f), "0.0");
  EXPECT_EQ(CSVLogger::FormatValue(-2.5f), "-2.5");
  EXPECT_EQ(CSVLogger::FormatValue(100.0f), "100.0");
  EXPECT_EQ(CSVLogger::FormatValue(0.1f), "0.10000000149011612");
  EXPECT_EQ(CSVLogger::FormatValue(1e-4f), "9.999999747378752e-05");
  EXPECT_EQ(CSVLogger::FormatValue(1e-5f), "9.999999747378752e-06");
  EXPECT_EQ(CSVLogger::FormatValue(123456789.0f), "123456792.0");
  EXPECT_EQ(CSVLogger::FormatValue(1e16f), "1.0000000272564224e+16");
  EXPECT_EQ(CSVLogger::FormatValue(1e20f), "1.0000000200408773e+20");
  EXPECT_EQ(CSVLogger::FormatValue(std::numeric_limits<float>::quiet_NaN()),
            "nan");
  EXPECT_EQ(CSVLogger::FormatValue(-std::numeric_limits<float>::infinity()),
            "-inf");
}

TEST_F(WatchingCallbackTest, CSVLoggerWritesKerasHeaderAndOneRowPerEpoch) {
  auto csv = callbacks::CSVLogger::Create(csv_path_).value();
  History h = model_
                  .Fit(x_, y_,
                       {.epochs = 2,
                        .verbose = 0,
                        .callbacks = {csv},
                        .validation_data = std::make_pair(x_, y_)})
                  .value();
  std::string expected = "epoch,accuracy,loss,val_accuracy,val_loss\r\n";
  for (int e = 0; e < 2; ++e) {
    absl::StrAppend(&expected, e);
    for (const char* key : {"accuracy", "loss", "val_accuracy", "val_loss"}) {
      absl::StrAppend(&expected, ",",
                      callbacks::CSVLogger::FormatValue(h.values(key)[e]));
    }
    expected += "\r\n";
  }
  EXPECT_EQ(ReadFileBytes(csv_path_), expected);
}

TEST_F(WatchingCallbackTest, CSVLoggerWritesNaForAKeyMissingLater) {
  auto csv = callbacks::CSVLogger::Create(csv_path_).value();
  ASSERT_TRUE(csv->OnTrainBegin(model_, {}).ok());
  ASSERT_TRUE(csv->OnEpochEnd(0, {{"b", 0.5f}, {"a", 1.0f}}).ok());
  ASSERT_TRUE(csv->OnEpochEnd(1, {{"a", 2.0f}}).ok());
  ASSERT_TRUE(csv->OnTrainEnd({}).ok());
  EXPECT_EQ(ReadFileBytes(csv_path_), "epoch,a,b\r\n0,1.0,0.5\r\n1,2.0,NA\r\n");
}

TEST_F(WatchingCallbackTest, CSVLoggerRewritesTheFileForEachFit) {
  auto csv = callbacks::CSVLogger::Create(csv_path_).value();
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.epochs = 3, .verbose = 0, .callbacks = {csv}}).ok());
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.epochs = 1, .verbose = 0, .callbacks = {csv}}).ok());
  const std::string text = ReadFileBytes(csv_path_);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
}

TEST_F(WatchingCallbackTest, CSVLoggerThatCannotOpenItsFileStopsTheFit) {
  const std::string path = csv_path_ + ".missing_dir/log.csv";
  auto csv = callbacks::CSVLogger::Create(path).value();
  const std::vector<Tensor> before = model_.GetWeights();
  absl::StatusOr<History> h =
      model_.Fit(x_, y_, {.verbose = 0, .callbacks = {csv}});
  EXPECT_FALSE(h.ok());
  EXPECT_TRUE(Mentions(h.status(), path)) << h.status();
  EXPECT_TRUE(SameWeights(model_.GetWeights(), before));  // before any step
}

}  // namespace
}  // namespace graphgc
