// models/scheduled_learning_rate.h: a learning-rate schedule's rate set
// before each of Fit's steps, the optimizer's step count, and the rate
// assignment SetLearningRate shares.
#include "models/scheduled_learning_rate.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/learning_rate_schedule.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace {

bool Mentions(const absl::Status& s, const std::string& text) {
  return s.message().find(text) != absl::string_view::npos;
}

// 0.1 * 0.5^(step / 2).
LearningRateSchedule Halving() {
  return LearningRateSchedule::Create(
             schedules::ExponentialDecay{.initial_learning_rate = 0.1,
                                         .decay_steps = 2,
                                         .decay_rate = 0.5})
      .value();
}

// Sets the rate of each batch to Halving()'s at the fit's step count, with
// SetLearningRate (a model with a fixed rate).
class SetsHalvingRate : public Callback {
 public:
  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo&) override {
    model_ = &model;
    return absl::OkStatus();
  }
  absl::Status OnBatchBegin(int64_t) override {
    return Sequential(*model_).SetLearningRate(
        static_cast<float>(Halving().LearningRateAt(step_++)));
  }

 private:
  const Sequential* model_ = nullptr;
  int64_t step_ = 0;
};

// Records model.learning_rate() at each batch's end.
class RecordsRate : public Callback {
 public:
  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo&) override {
    model_ = &model;
    return absl::OkStatus();
  }
  absl::Status OnBatchEnd(int64_t, const Logs&) override {
    absl::StatusOr<float> rate = model_->learning_rate();
    if (!rate.ok()) return rate.status();
    rates.push_back(*rate);
    return absl::OkStatus();
  }
  std::vector<float> rates;

 private:
  const Sequential* model_ = nullptr;
};

class ScheduledRateTest : public ::testing::Test {
 protected:
  // Input(3) -> Dense(2, seed 1), SGD, mean squared error.
  Sequential Model(Optimizer optimizer) {
    Sequential m =
        Sequential::Create({layers::Input({3}), layers::Dense(2, {.seed = 1})},
                           {.graph = &g_})
            .value();
    EXPECT_TRUE(m.Compile({.optimizer = std::move(optimizer),
                           .loss = losses::MeanSquaredError()})
                    .ok());
    return m;
  }
  // 8 samples, batches of 2 without shuffling: 4 steps an epoch.
  FitOptions Options(std::vector<std::shared_ptr<Callback>> callbacks = {}) {
    return {.epochs = 2,
            .batch_size = 2,
            .shuffle = false,
            .verbose = 0,
            .callbacks = std::move(callbacks)};
  }
  Tensor X() {
    std::vector<float> v(8 * 3);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * (i % 7) - 0.3f;
    return Tensor::FromData<float>({8, 3}, v).value();
  }
  Tensor Y() {
    std::vector<float> v(8 * 2);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.2f * (i % 5) - 0.4f;
    return Tensor::FromData<float>({8, 2}, v).value();
  }
  static Optimizer Scheduled() {
    Optimizer o = optimizers::SGD();
    o.learning_rate_schedule = Halving();
    return o;
  }
  static bool Same(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      auto x = a[i].data<float>(), y = b[i].data<float>();
      if (x.size() != y.size()) return false;
      for (size_t k = 0; k < x.size(); ++k) {
        if (x[k] != y[k]) return false;
      }
    }
    return true;
  }
  Graph g_;
};

TEST_F(ScheduledRateTest, EachStepTrainsAtTheSchedulesRateForItsStepCount) {
  Sequential scheduled = Model(Scheduled());
  ASSERT_TRUE(scheduled.Fit(X(), Y(), Options()).ok());
  // The same steps with each rate set by hand before its step.
  Sequential by_hand = Model(optimizers::SGD());
  ASSERT_TRUE(
      by_hand.Fit(X(), Y(), Options({std::make_shared<SetsHalvingRate>()}))
          .ok());
  EXPECT_TRUE(Same(scheduled.GetWeights(), by_hand.GetWeights()));
  // A fixed rate trains to other weights.
  Sequential fixed = Model(optimizers::SGD({.learning_rate = 0.1f}));
  ASSERT_TRUE(fixed.Fit(X(), Y(), Options()).ok());
  EXPECT_FALSE(Same(scheduled.GetWeights(), fixed.GetWeights()));
}

TEST_F(ScheduledRateTest, LearningRateIsTheSchedulesAtTheStepCount) {
  Sequential m = Model(Scheduled());
  EXPECT_FLOAT_EQ(m.learning_rate().value(), 0.1f);
  auto record = std::make_shared<RecordsRate>();
  ASSERT_TRUE(m.Fit(X(), Y(), Options({record})).ok());
  // After step k, the count is k + 1.
  ASSERT_EQ(record->rates.size(), 8u);
  for (int64_t k = 0; k < 8; ++k) {
    EXPECT_FLOAT_EQ(record->rates[k],
                    static_cast<float>(0.1 * std::pow(0.5, (k + 1) / 2.0)))
        << k;
  }
}

TEST_F(ScheduledRateTest, ASecondFitContinuesFromTheStepCount) {
  Sequential m = Model(Scheduled());
  ASSERT_TRUE(m.Fit(X(), Y(), Options()).ok());
  ASSERT_TRUE(m.Fit(X(), Y(), Options()).ok());
  EXPECT_EQ(m.iterations().value(), 16);
  EXPECT_FLOAT_EQ(m.learning_rate().value(),
                  0.1f * 0.5f * 0.5f * 0.5f * 0.5f * 0.5f * 0.5f * 0.5f * 0.5f);
}

TEST_F(ScheduledRateTest, IterationsCountsEveryStep) {
  Sequential m = Model(optimizers::SGD());
  EXPECT_EQ(m.iterations().value(), 0);
  ASSERT_TRUE(m.Fit(X(), Y(), Options()).ok());
  EXPECT_EQ(m.iterations().value(), 8);
}

TEST_F(ScheduledRateTest, IterationsBeforeCompileIsFailedPrecondition) {
  Sequential m =
      Sequential::Create({layers::Input({3}), layers::Dense(2)}, {.graph = &g_})
          .value();
  EXPECT_EQ(m.iterations().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(ScheduledRateTest, SetLearningRateIsRefusedWithKerasMessage) {
  Sequential m = Model(Scheduled());
  const absl::Status s = m.SetLearningRate(0.5f);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Mentions(s, "hence its learning rate is not settable")) << s;
}

TEST_F(ScheduledRateTest, ARateThatIsNotFiniteStopsTheFitNamingTheStep) {
  // t_mul 0.5: the periods' lengths sum to 2 * first_decay_steps, past
  // which Keras's formula is NaN.
  Optimizer o = optimizers::SGD();
  o.learning_rate_schedule =
      LearningRateSchedule::Create(
          schedules::CosineDecayRestarts{.initial_learning_rate = 0.1,
                                         .first_decay_steps = 1,
                                         .t_mul = 0.5})
          .value();
  Sequential m = Model(o);
  const absl::Status s = m.Fit(X(), Y(), Options()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "CosineDecayRestarts at step 2")) << s;
  EXPECT_TRUE(Mentions(s, "learning_rate must be finite and >= 0")) << s;
}

}  // namespace
}  // namespace graphgc
