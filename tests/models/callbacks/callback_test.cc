// Tests of models/callbacks/callback.h: the claims that keep a callback to one
// fit at a time, and Validate() refusing a fit before any hook runs.
#include "models/callbacks/callback.h"

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
