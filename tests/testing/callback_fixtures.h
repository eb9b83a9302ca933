// tests/testing/callback_fixtures.h
//
// What the tests of the stock callbacks (tests/models/callbacks/) share: a
// compiled model to drive them with, by hand (WatchingCallbackTest) or in a
// fit writing to a log directory (LogDirFaultTest), and helpers to look at
// the model's weights and at statuses.
#ifndef GRAPHGC_TESTS_TESTING_CALLBACK_FIXTURES_H_
#define GRAPHGC_TESTS_TESTING_CALLBACK_FIXTURES_H_

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "tests/testing/temp_path.h"

namespace graphgc {

// A compiled Input(2) -> Dense(3, softmax) on its own graph, SGD, 8
// samples, and log_dir_, a path for the test's log directory, empty at the
// start and removed at the end.
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

inline bool Mentions(const absl::Status& s, const std::string& text) {
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

inline bool SameWeights(const std::vector<Tensor>& a,
                        const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto x = a[i].data<float>(), y = b[i].data<float>();
    if (x.size() != y.size() || !std::equal(x.begin(), x.end(), y.begin())) {
      return false;
    }
  }
  return true;
}

// Every weight of `model`, flattened, to tell whether a fit moved any.
inline std::vector<float> AllWeights(const Sequential& model) {
  std::vector<float> out;
  for (const Tensor& t : model.GetWeights()) {
    for (float v : t.data<float>()) out.push_back(v);
  }
  return out;
}

}  // namespace graphgc

#endif  // GRAPHGC_TESTS_TESTING_CALLBACK_FIXTURES_H_
