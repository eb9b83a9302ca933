#include "models/callbacks.h"

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
#include "tests/testing/temp_path.h"

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

}  // namespace
}  // namespace graphgc

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

class LogDirFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_dir_ = TestTempPath();
    model_ = Sequential::Create({layers::Input({2}),
                                 layers::Dense(3, {.activation = "softmax"})},
                                {.graph = &g_})
                 .value();
    ASSERT_TRUE(model_
                    .Compile({.optimizer = optimizers::SGD(),
                              .loss = losses::SparseCategoricalCrossentropy()})
                    .ok());
    x_ = Tensor::FromData<float>({8, 2}, std::vector<float>(16, 0.25f)).value();
    y_ = Tensor::FromData<int32_t>({8}, std::vector<int32_t>(8, 2)).value();
  }
  void TearDown() override { std::filesystem::remove_all(log_dir_); }

  Graph g_;
  Sequential model_ =
      Sequential::Create({layers::Input({1}), layers::Dense(1)}).value();
  Tensor x_, y_;
  std::string log_dir_;
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

// Every weight of `model`, flattened, to tell whether a fit moved any.
std::vector<float> AllWeights(const Sequential& model) {
  std::vector<float> out;
  for (const Tensor& t : model.GetWeights()) {
    for (float v : t.data<float>()) out.push_back(v);
  }
  return out;
}

// Blocks in OnTrainBegin until released, so a test can start a second fit
// while the first is surely running. Counts the hooks that reached it.
class BlockInTrainBegin : public Callback {
 public:
  absl::Status OnTrainBegin(const Sequential&, const TrainInfo&) override {
    ++train_begins;
    entered_.set_value();
    release_.get_future().wait();
    return absl::OkStatus();
  }
  void WaitUntilEntered() { entered_future_.wait(); }
  void Release() { release_.set_value(); }

  int train_begins = 0;

 private:
  std::promise<void> entered_;
  std::future<void> entered_future_ = entered_.get_future();
  std::promise<void> release_;
};

// Counts OnTrainBegin calls; optionally fails OnEpochEnd.
class CountTrainBegins : public Callback {
 public:
  explicit CountTrainBegins(bool fail_epoch_end = false)
      : fail_epoch_end_(fail_epoch_end) {}
  absl::Status OnTrainBegin(const Sequential&, const TrainInfo&) override {
    ++train_begins;
    return absl::OkStatus();
  }
  absl::Status OnEpochEnd(int, const Logs&) override {
    return fail_epoch_end_ ? absl::InternalError("epoch end fails")
                           : absl::OkStatus();
  }
  int train_begins = 0;

 private:
  bool fail_epoch_end_;
};

class SharedCallbackTest : public LogDirFaultTest {
 protected:
  // A second compiled model on its own graph.
  Sequential OtherModel() {
    Sequential m =
        Sequential::Create(
            {layers::Input({2}), layers::Dense(3, {.activation = "softmax"})},
            {.name = "other", .graph = &other_g_})
            .value();
    EXPECT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                           .loss = losses::SparseCategoricalCrossentropy()})
                    .ok());
    return m;
  }
  Graph other_g_;
};

TEST_F(SharedCallbackTest, SecondConcurrentFitWithTheSameCallbackIsRefused) {
  auto tensorboard = callbacks::TensorBoard::Create({.log_dir = log_dir_});
  auto blocker = std::make_shared<BlockInTrainBegin>();
  Sequential other = OtherModel();
  const std::vector<float> weights = AllWeights(other);
  absl::StatusOr<History> first;
  std::thread t([&] {
    first =
        model_.Fit(x_, y_, {.verbose = 0, .callbacks = {blocker, tensorboard}});
  });
  blocker->WaitUntilEntered();  // the first fit holds its callbacks now
  auto counter = std::make_shared<CountTrainBegins>();
  absl::StatusOr<History> second =
      other.Fit(x_, y_, {.verbose = 0, .callbacks = {counter, tensorboard}});
  blocker->Release();
  t.join();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition)
      << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "TensorBoard"))
      << second.status();
  EXPECT_TRUE(absl::StrContains(
      second.status().message(),
      absl::StrCat("in use by a running fit of model '", model_.name(), "'")))
      << second.status();
  // Refused before anything happened: no hook ran, no weight moved.
  EXPECT_EQ(counter->train_begins, 0);
  EXPECT_EQ(AllWeights(other), weights);
}

TEST_F(SharedCallbackTest, SequentialFitsMayReuseOneCallback) {
  auto tensorboard = callbacks::TensorBoard::Create({.log_dir = log_dir_});
  Sequential other = OtherModel();
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.verbose = 0, .callbacks = {tensorboard}}).ok());
  const std::string first_path = tensorboard->train_path();
  absl::StatusOr<History> h =
      other.Fit(x_, y_, {.verbose = 0, .callbacks = {tensorboard}});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_NE(tensorboard->train_path(), first_path);
}

TEST_F(SharedCallbackTest, AFailedFitReleasesItsCallbacks) {
  auto failing = std::make_shared<CountTrainBegins>(/*fail_epoch_end=*/true);
  Sequential other = OtherModel();
  EXPECT_FALSE(model_.Fit(x_, y_, {.verbose = 0, .callbacks = {failing}}).ok());
  EXPECT_FALSE(other.Fit(x_, y_, {.verbose = 0, .callbacks = {failing}}).ok());
  EXPECT_EQ(failing->train_begins, 2);  // the second fit was not refused
}

TEST_F(SharedCallbackTest, ACallbackListedTwiceInOneFitIsNotRefused) {
  auto counter = std::make_shared<CountTrainBegins>();
  absl::StatusOr<History> h =
      model_.Fit(x_, y_, {.verbose = 0, .callbacks = {counter, counter}});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(counter->train_begins, 2);
}

TEST_F(LogDirFaultTest, EmptyLogDirIsRefusedBeforeAnyHookOrWrite) {
  auto counter = std::make_shared<CountTrainBegins>();
  const std::vector<float> weights = AllWeights(model_);
  absl::StatusOr<History> h = model_.Fit(
      x_, y_,
      {.verbose = 0,
       .callbacks = {counter,
                     callbacks::TensorBoard::Create({.log_dir = ""})}});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument)
      << h.status();
  EXPECT_TRUE(absl::StrContains(h.status().message(), "log_dir is empty"))
      << h.status();
  EXPECT_EQ(counter->train_begins, 0);
  EXPECT_EQ(AllWeights(model_), weights);
}

TEST_F(LogDirFaultTest, LogDirWithANulByteIsRefusedAndCreatesNothing) {
  auto tensorboard = callbacks::TensorBoard::Create(
      {.log_dir = log_dir_ + std::string("\0/stray", 7)});
  absl::StatusOr<History> h =
      model_.Fit(x_, y_, {.verbose = 0, .callbacks = {tensorboard}});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument)
      << h.status();
  EXPECT_TRUE(absl::StrContains(h.status().message(), "NUL")) << h.status();
  EXPECT_FALSE(std::filesystem::exists(log_dir_));
  EXPECT_TRUE(tensorboard->train_path().empty());
}

// A compiled Input(2) -> Dense(3, softmax) on its own graph, SGD with
// learning rate 0.1, and 8 samples, for driving the stock callbacks.
class WatchingCallbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        model_
            .Compile({.optimizer = optimizers::SGD({.learning_rate = 0.1f}),
                      .loss = losses::SparseCategoricalCrossentropy(),
                      .metrics = {"accuracy"}})
            .ok());
    std::vector<float> xs(16);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.1f * i;
    x_ = Tensor::FromData<float>({8, 2}, xs).value();
    y_ = Tensor::FromData<int32_t>({8}, {0, 1, 2, 0, 1, 2, 0, 1}).value();
    csv_path_ = TestTempPath(".csv");
  }
  void TearDown() override { std::filesystem::remove(csv_path_); }

  // Feeds `values` of `key` as the logs of successive epochs, as Fit would.
  void Epochs(Callback& cb, const std::string& key,
              const std::vector<float>& values) {
    ASSERT_TRUE(cb.OnTrainBegin(model_, {.epochs = 100}).ok());
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_TRUE(cb.OnEpochEnd(static_cast<int>(i), {{key, values[i]}}).ok());
    }
  }

  Graph g_;
  Sequential model_ =
      Sequential::Create(
          {layers::Input({2}), layers::Dense(3, {.activation = "softmax"})},
          {.graph = &g_})
          .value();
  Tensor x_, y_;
  std::string csv_path_;
};

bool Mentions(const absl::Status& s, const std::string& text) {
  return absl::StrContains(s.message(), text);
}

// Records the model's weights at every epoch end.
class RecordWeights : public Callback {
 public:
  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo&) override {
    model_ = &model;
    return absl::OkStatus();
  }
  absl::Status OnEpochEnd(int, const Logs&) override {
    weights.push_back(model_->GetWeights());
    return absl::OkStatus();
  }
  std::vector<std::vector<Tensor>> weights;

 private:
  const Sequential* model_ = nullptr;
};

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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
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
  EXPECT_EQ(ReadFile(csv_path_), expected);
}

TEST_F(WatchingCallbackTest, CSVLoggerWritesNaForAKeyMissingLater) {
  auto csv = callbacks::CSVLogger::Create(csv_path_).value();
  ASSERT_TRUE(csv->OnTrainBegin(model_, {}).ok());
  ASSERT_TRUE(csv->OnEpochEnd(0, {{"b", 0.5f}, {"a", 1.0f}}).ok());
  ASSERT_TRUE(csv->OnEpochEnd(1, {{"a", 2.0f}}).ok());
  ASSERT_TRUE(csv->OnTrainEnd({}).ok());
  EXPECT_EQ(ReadFile(csv_path_), "epoch,a,b\r\n0,1.0,0.5\r\n1,2.0,NA\r\n");
}

TEST_F(WatchingCallbackTest, CSVLoggerRewritesTheFileForEachFit) {
  auto csv = callbacks::CSVLogger::Create(csv_path_).value();
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.epochs = 3, .verbose = 0, .callbacks = {csv}}).ok());
  ASSERT_TRUE(
      model_.Fit(x_, y_, {.epochs = 1, .verbose = 0, .callbacks = {csv}}).ok());
  const std::string text = ReadFile(csv_path_);
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
      DecodeKerasWeights(ReadFile(path),
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
  EXPECT_EQ(ReadFile(dir_ + "/w.weights.h5"),
            ReadFile(dir_ + "/model/model.weights.h5"));
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

}  // namespace
}  // namespace graphgc
