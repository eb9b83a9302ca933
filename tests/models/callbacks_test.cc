#include "models/callbacks.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "serialize/event_file.h"

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

TEST(ProgressBar, PrintsAKerasStyleLinePerEpochOffATerminal) {
  Graph g;
  Sequential m =
      Sequential::Create(
          {layers::Input({2}), layers::Dense(2, {.activation = "softmax"})},
          {.graph = &g})
          .value();
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                         .loss = losses::SparseCategoricalCrossentropy()})
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
  EXPECT_NE(text.find("Epoch 1/2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Epoch 2/2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("100/100 [==============================] - "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("/sample - loss: "), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
}

// Keras: int(30 * 320 / 1000) = 9 cells, the last one the '>' head.
TEST(ProgressBar, PartialLineShowsProgressAndEta) {
  Graph g;
  Sequential m =
      Sequential::Create({layers::Input({1}), layers::Dense(1)}, {.graph = &g})
          .value();
  std::FILE* devnull = std::fopen("/dev/null", "w");
  callbacks::ProgressBar quiet({.out = devnull, .redraw = 0});
  ASSERT_TRUE(quiet.OnTrainBegin(m, {.epochs = 1, .samples = 1000}).ok());
  ASSERT_TRUE(quiet.OnEpochBegin(0).ok());
  ASSERT_TRUE(quiet.OnBatchEnd(0, {{"loss", 2.5f}, {"size", 320.f}}).ok());
  const std::string line = quiet.Line(false);
  std::fclose(devnull);
  EXPECT_EQ(line.substr(0, 42), " 320/1000 [========>.....................]");
  EXPECT_NE(line.find("ETA:"), std::string::npos);
  EXPECT_NE(line.find("loss: 2.5000"), std::string::npos);
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
    const char* tmp = std::getenv("TEST_TMPDIR");
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    log_dir_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + info->name();
    std::filesystem::remove_all(log_dir_);
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
  // file_version, the graph again, then epoch_loss of epochs 0, 1 and 2.
  ASSERT_EQ(events->size(), 5u);
  EXPECT_EQ((*events)[0].file_version(), kEventFileVersion);
  EXPECT_TRUE((*events)[1].has_graph_def());
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    const tensorflow::Event& e = (*events)[2 + epoch];
    EXPECT_EQ(e.step(), epoch);
    ASSERT_EQ(e.summary().value_size(), 1);
    EXPECT_EQ(e.summary().value(0).tag(), "epoch_loss");
    EXPECT_FLOAT_EQ(e.summary().value(0).simple_value(),
                    h->values("loss")[epoch]);
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

}  // namespace
}  // namespace graphgc
