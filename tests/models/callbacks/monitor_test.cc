#include "models/callbacks/monitor.h"

#include <limits>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace graphgc::callbacks {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ResolveMode, AutoMaximisesMonitorsNamingAccuracyAndMinimisesTheRest) {
  EXPECT_EQ(ResolveMode("auto", "val_accuracy"), MonitorMode::kMax);
  EXPECT_EQ(ResolveMode("auto", "acc"), MonitorMode::kMax);
  EXPECT_EQ(ResolveMode("auto", "val_loss"), MonitorMode::kMin);
  EXPECT_EQ(ResolveMode("min", "accuracy"), MonitorMode::kMin);
  EXPECT_EQ(ResolveMode("max", "loss"), MonitorMode::kMax);
}

TEST(CheckMonitorAndMode, RefusesAnEmptyMonitorOrAnUnknownMode) {
  EXPECT_TRUE(CheckMonitorAndMode("X", "loss", "auto").ok());
  absl::Status empty = CheckMonitorAndMode("X", "", "auto");
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(empty.message(), "X: monitor is empty"));
  absl::Status mode = CheckMonitorAndMode("X", "loss", "up");
  EXPECT_EQ(mode.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(mode.message(), "\"up\""));
}

TEST(Monitored, AMissingMonitorNamesItTheEpochAndTheKeys) {
  const std::map<std::string, float> logs = {{"loss", 0.5f}, {"acc", 1.f}};
  EXPECT_EQ(Monitored("X", "loss", 0, logs).value(), 0.5f);
  absl::StatusOr<float> missing = Monitored("X", "val_loss", 2, logs);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(missing.status().message(),
                                "X: monitor 'val_loss' is not in the logs of "
                                "epoch 3 (available: acc, loss)"))
      << missing.status();
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "validation_data"));
}

// A value exactly min_delta better than the best is no improvement, under
// either rule and in either mode.
TEST(Improves, IsStrictAtTheMinDeltaBoundary) {
  for (DeltaOn on : {DeltaOn::kCurrent, DeltaOn::kBest}) {
    EXPECT_FALSE(Improves(0.75, 1.0, 0.25, MonitorMode::kMin, on));
    EXPECT_TRUE(Improves(0.5, 1.0, 0.25, MonitorMode::kMin, on));
    EXPECT_FALSE(Improves(1.25, 1.0, 0.25, MonitorMode::kMax, on));
    EXPECT_TRUE(Improves(1.5, 1.0, 0.25, MonitorMode::kMax, on));
    EXPECT_FALSE(Improves(1.0, 1.0, 0.0, MonitorMode::kMin, on));
    EXPECT_FALSE(Improves(1.0, 1.0, 0.0, MonitorMode::kMax, on));
  }
}

// kCurrent computes current + min_delta < best (EarlyStopping), kBest
// current < best - min_delta (ReduceLROnPlateau): -2^-60 + 1 rounds to 1,
// while 1 - 1 is exactly 0.
TEST(Improves, AppliesMinDeltaToTheSideItsRuleNames) {
  EXPECT_FALSE(
      Improves(-0x1p-60, 1.0, 1.0, MonitorMode::kMin, DeltaOn::kCurrent));
  EXPECT_TRUE(Improves(-0x1p-60, 1.0, 1.0, MonitorMode::kMin, DeltaOn::kBest));
  EXPECT_FALSE(
      Improves(0x1p-60, -1.0, 1.0, MonitorMode::kMax, DeltaOn::kCurrent));
  EXPECT_TRUE(Improves(0x1p-60, -1.0, 1.0, MonitorMode::kMax, DeltaOn::kBest));
}

TEST(Improves, TakesANegativeMinDeltaAsGiven) {
  EXPECT_TRUE(Improves(1.2, 1.0, -0.25, MonitorMode::kMin, DeltaOn::kBest));
  EXPECT_TRUE(Improves(1.2, 1.0, -0.25, MonitorMode::kMin, DeltaOn::kCurrent));
}

TEST(Improves, NaNNeverImprovesAndAnyNumberBeatsAnInfiniteStart) {
  for (DeltaOn on : {DeltaOn::kCurrent, DeltaOn::kBest}) {
    EXPECT_FALSE(Improves(kNaN, kInf, 0.0, MonitorMode::kMin, on));
    EXPECT_FALSE(Improves(kNaN, -kInf, 0.0, MonitorMode::kMax, on));
    EXPECT_FALSE(Improves(0.5, kNaN, 0.0, MonitorMode::kMin, on));
    EXPECT_TRUE(Improves(1e30, kInf, 0.0, MonitorMode::kMin, on));
    EXPECT_TRUE(Improves(-1e30, -kInf, 0.0, MonitorMode::kMax, on));
  }
}

}  // namespace
}  // namespace graphgc::callbacks
