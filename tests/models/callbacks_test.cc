#include "models/callbacks.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

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

}  // namespace
}  // namespace graphgc
