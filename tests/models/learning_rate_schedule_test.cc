#include "models/learning_rate_schedule.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace graphgc {
namespace {

using schedules::CosineDecay;
using schedules::CosineDecayRestarts;
using schedules::ExponentialDecay;
using schedules::InverseTimeDecay;
using schedules::PiecewiseConstantDecay;
using schedules::PolynomialDecay;

constexpr double kPi = std::numbers::pi;

LearningRateSchedule Make(LearningRateSchedule::Options options) {
  absl::StatusOr<LearningRateSchedule> s =
      LearningRateSchedule::Create(std::move(options));
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

// The refusal of `options`: InvalidArgument naming the schedule and `arg`.
void ExpectRefused(LearningRateSchedule::Options options,
                   const std::string& schedule, const std::string& arg) {
  absl::StatusOr<LearningRateSchedule> s =
      LearningRateSchedule::Create(std::move(options));
  ASSERT_FALSE(s.ok()) << schedule << " " << arg;
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find(schedule), std::string::npos)
      << s.status();
  EXPECT_NE(s.status().message().find(arg), std::string::npos) << s.status();
}

TEST(ExponentialDecay, IsInitialTimesRateToTheStepsOverDecaySteps) {
  const LearningRateSchedule s = Make(ExponentialDecay{
      .initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5});
  EXPECT_DOUBLE_EQ(s.LearningRateAt(0), 0.1);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(5), 0.1 * std::pow(0.5, 0.5));
  EXPECT_DOUBLE_EQ(s.LearningRateAt(10), 0.05);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(25), 0.1 * std::pow(0.5, 2.5));
  EXPECT_STREQ(s.class_name(), "ExponentialDecay");
}

TEST(ExponentialDecay, StaircaseDecaysOnlyAtWholeMultiplesOfDecaySteps) {
  const LearningRateSchedule s =
      Make(ExponentialDecay{.initial_learning_rate = 0.1,
                            .decay_steps = 10,
                            .decay_rate = 0.5,
                            .staircase = true});
  EXPECT_DOUBLE_EQ(s.LearningRateAt(9), 0.1);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(10), 0.05);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(19), 0.05);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(20), 0.025);
}

TEST(PiecewiseConstantDecay, EachValueHoldsUpToAndIncludingItsBoundary) {
  const LearningRateSchedule s = Make(PiecewiseConstantDecay{
      .boundaries = {10, 20}, .values = {1.0, 0.5, 0.1}});
  EXPECT_EQ(s.LearningRateAt(0), 1.0);
  EXPECT_EQ(s.LearningRateAt(10), 1.0);
  EXPECT_EQ(s.LearningRateAt(11), 0.5);
  EXPECT_EQ(s.LearningRateAt(20), 0.5);
  EXPECT_EQ(s.LearningRateAt(21), 0.1);
  EXPECT_EQ(s.LearningRateAt(1000), 0.1);
}

TEST(PiecewiseConstantDecay, FractionalBoundariesAreCastToTheStepsIntegers) {
  // Keras casts 2.7 to the int64 step's type: 2.
  const LearningRateSchedule s =
      Make(PiecewiseConstantDecay{.boundaries = {2.7}, .values = {1.0, 0.5}});
  EXPECT_EQ(s.LearningRateAt(2), 1.0);
  EXPECT_EQ(s.LearningRateAt(3), 0.5);
}

TEST(InverseTimeDecay, IsInitialOverOnePlusRateTimesProgress) {
  const LearningRateSchedule s = Make(InverseTimeDecay{
      .initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5});
  EXPECT_DOUBLE_EQ(s.LearningRateAt(0), 0.1);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(5), 0.1 / 1.25);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(30), 0.1 / 2.5);
}

TEST(InverseTimeDecay, StaircaseFloorsTheProgress) {
  const LearningRateSchedule s =
      Make(InverseTimeDecay{.initial_learning_rate = 0.1,
                            .decay_steps = 10,
                            .decay_rate = 0.5,
                            .staircase = true});
  EXPECT_DOUBLE_EQ(s.LearningRateAt(9), 0.1);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(10), 0.1 / 1.5);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(29), 0.1 / 2.0);
}

TEST(PolynomialDecay, ReachesTheEndRateAtDecayStepsAndStaysThere) {
  const LearningRateSchedule s =
      Make(PolynomialDecay{.initial_learning_rate = 0.1,
                           .decay_steps = 10,
                           .end_learning_rate = 0.01,
                           .power = 2.0});
  EXPECT_DOUBLE_EQ(s.LearningRateAt(0), 0.1);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(5), 0.09 * 0.25 + 0.01);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(10), 0.01);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(20), 0.01);
}

TEST(PolynomialDecay, CycleDecaysOverTheNextMultipleOfDecaySteps) {
  const LearningRateSchedule s =
      Make(PolynomialDecay{.initial_learning_rate = 0.1,
                           .decay_steps = 10,
                           .end_learning_rate = 0.01,
                           .power = 1.0,
                           .cycle = true});
  EXPECT_DOUBLE_EQ(s.LearningRateAt(0), 0.1);  // multiplier 1 at step 0
  EXPECT_DOUBLE_EQ(s.LearningRateAt(5), 0.09 * 0.5 + 0.01);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(10), 0.01);
  // Past 10 the period is 20: (1 - 11/20), (1 - 15/20).
  EXPECT_DOUBLE_EQ(s.LearningRateAt(11), 0.09 * (1 - 11.0 / 20) + 0.01);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(15), 0.09 * 0.25 + 0.01);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(20), 0.01);
}

TEST(PolynomialDecay, DefaultsAreKeras) {
  const PolynomialDecay o;
  EXPECT_EQ(o.end_learning_rate, 0.0001);
  EXPECT_EQ(o.power, 1.0);
  EXPECT_FALSE(o.cycle);
  EXPECT_EQ(o.name, "PolynomialDecay");
}

TEST(CosineDecay, DecaysFromInitialToAlphaTimesInitial) {
  const LearningRateSchedule s = Make(CosineDecay{
      .initial_learning_rate = 0.1, .decay_steps = 10, .alpha = 0.1});
  auto want = [](double step) {
    return 0.1 * (0.9 * 0.5 * (1 + std::cos(kPi * step / 10)) + 0.1);
  };
  EXPECT_DOUBLE_EQ(s.LearningRateAt(0), 0.1);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(3), want(3));
  EXPECT_DOUBLE_EQ(s.LearningRateAt(5), want(5));
  EXPECT_DOUBLE_EQ(s.LearningRateAt(10), 0.01);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(50), 0.01);
}

TEST(CosineDecay, WarmsUpLinearlyToTheTargetThenDecaysFromIt) {
  const LearningRateSchedule s = Make(CosineDecay{.initial_learning_rate = 0.0,
                                                  .decay_steps = 10,
                                                  .warmup_target = 0.1,
                                                  .warmup_steps = 5});
  EXPECT_DOUBLE_EQ(s.LearningRateAt(0), 0.0);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(1), 0.02);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(4), 0.08);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(5), 0.1);  // the decay's first step
  EXPECT_DOUBLE_EQ(s.LearningRateAt(10), 0.1 * 0.5 * (1 + std::cos(kPi * 0.5)));
  EXPECT_NEAR(s.LearningRateAt(15), 0.0, 1e-17);
  EXPECT_NEAR(s.LearningRateAt(100), 0.0, 1e-17);
}

TEST(CosineDecay, WarmupTargetWithoutWarmupStepsDecaysFromTheTarget) {
  const LearningRateSchedule s = Make(CosineDecay{
      .initial_learning_rate = 0.5, .decay_steps = 10, .warmup_target = 0.1});
  EXPECT_DOUBLE_EQ(s.LearningRateAt(0), 0.1);
}

TEST(CosineDecayRestarts, EachPeriodIsTMulLongerAndMMulHigher) {
  const LearningRateSchedule s = Make(CosineDecayRestarts{
      .initial_learning_rate = 0.1, .first_decay_steps = 10, .m_mul = 0.5});
  // Periods [0, 10), [10, 30), [30, 70): lengths 10, 20, 40.
  EXPECT_DOUBLE_EQ(s.LearningRateAt(0), 0.1);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(5), 0.1 * 0.5 * (1 + std::cos(kPi * 0.5)));
  EXPECT_DOUBLE_EQ(s.LearningRateAt(10), 0.05);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(20),
                   0.1 * 0.5 * 0.5 * (1 + std::cos(kPi * 0.5)));
  EXPECT_DOUBLE_EQ(s.LearningRateAt(30), 0.025);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(40),
                   0.1 * 0.5 * 0.25 * (1 + std::cos(kPi * 0.25)));
  EXPECT_STREQ(s.class_name(), "CosineDecayRestarts");
}

TEST(CosineDecayRestarts, TMulOfOneRestartsEveryFirstDecaySteps) {
  const LearningRateSchedule s =
      Make(CosineDecayRestarts{.initial_learning_rate = 0.1,
                               .first_decay_steps = 10,
                               .t_mul = 1.0,
                               .alpha = 0.1});
  auto want = [](double fraction) {
    return 0.1 * (0.9 * 0.5 * (1 + std::cos(kPi * fraction)) + 0.1);
  };
  EXPECT_DOUBLE_EQ(s.LearningRateAt(0), 0.1);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(5), want(0.5));
  EXPECT_DOUBLE_EQ(s.LearningRateAt(10), 0.1);
  EXPECT_DOUBLE_EQ(s.LearningRateAt(15), want(0.5));
}

TEST(LearningRateSchedule, DecayStepsMustBePositiveAsKerasSays) {
  ExpectRefused(
      ExponentialDecay{
          .initial_learning_rate = 0.1, .decay_steps = 0, .decay_rate = 0.5},
      "ExponentialDecay", "Argument `decay_steps` must be > 0");
  ExpectRefused(
      InverseTimeDecay{
          .initial_learning_rate = 0.1, .decay_steps = -1, .decay_rate = 0.5},
      "InverseTimeDecay", "decay_steps");
  ExpectRefused(PolynomialDecay{.initial_learning_rate = 0.1, .decay_steps = 0},
                "PolynomialDecay", "decay_steps");
  ExpectRefused(CosineDecay{.initial_learning_rate = 0.1, .decay_steps = 0},
                "CosineDecay", "decay_steps");
  ExpectRefused(
      CosineDecayRestarts{.initial_learning_rate = 0.1, .first_decay_steps = 0},
      "CosineDecayRestarts", "first_decay_steps");
}

TEST(LearningRateSchedule, RefusesRatesThatAreNegativeOrNotFinite) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ExpectRefused(
      ExponentialDecay{
          .initial_learning_rate = -0.1, .decay_steps = 10, .decay_rate = 0.5},
      "ExponentialDecay", "initial_learning_rate");
  ExpectRefused(
      ExponentialDecay{
          .initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = nan},
      "ExponentialDecay", "decay_rate");
  ExpectRefused(PolynomialDecay{.initial_learning_rate = 0.1,
                                .decay_steps = 10,
                                .end_learning_rate = -1},
                "PolynomialDecay", "end_learning_rate");
  ExpectRefused(CosineDecay{.initial_learning_rate = 0.1,
                            .decay_steps = 10,
                            .warmup_target = -0.1,
                            .warmup_steps = 5},
                "CosineDecay", "warmup_target");
  ExpectRefused(
      CosineDecay{
          .initial_learning_rate = 0.1, .decay_steps = 10, .warmup_steps = -5},
      "CosineDecay", "warmup_steps");
  ExpectRefused(
      CosineDecayRestarts{
          .initial_learning_rate = 0.1, .first_decay_steps = 10, .t_mul = 0},
      "CosineDecayRestarts", "t_mul");
}

TEST(PiecewiseConstantDecay, RefusesMismatchedLengthsAndUnorderedBoundaries) {
  ExpectRefused(PiecewiseConstantDecay{.boundaries = {10}, .values = {1.0}},
                "PiecewiseConstantDecay",
                "The length of boundaries should be 1 less than the length "
                "of values");
  ExpectRefused(
      PiecewiseConstantDecay{.boundaries = {10, 10}, .values = {1.0, 0.5, 0.1}},
      "PiecewiseConstantDecay", "boundaries[1]");
  ExpectRefused(
      PiecewiseConstantDecay{.boundaries = {10}, .values = {1.0, -0.5}},
      "PiecewiseConstantDecay", "values[1]");
}

TEST(LearningRateSchedule, EqualWhenTheirOptionsAre) {
  const LearningRateSchedule a = Make(ExponentialDecay{
      .initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5});
  const LearningRateSchedule b = Make(ExponentialDecay{
      .initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5});
  const LearningRateSchedule c = Make(InverseTimeDecay{
      .initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5});
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
}

}  // namespace
}  // namespace graphgc
