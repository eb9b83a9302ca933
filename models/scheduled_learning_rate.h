// models/scheduled_learning_rate.h
//
// Setting a compiled model's learning rate between steps without building
// anything (the rate is a variable the update nodes read,
// optimizer_registry.h's LearningRateNodes), and Fit's rate for each step
// from a learning-rate schedule. Private to models/.
#ifndef GRAPHGC_MODELS_SCHEDULED_LEARNING_RATE_H_
#define GRAPHGC_MODELS_SCHEDULED_LEARNING_RATE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/learning_rate_schedule.h"
#include "models/optimizer_registry.h"
#include "runtime/graph.h"
#include "runtime/session.h"

namespace graphgc {
namespace models_internal {

// Assigns `rate` to the learning rate variable; a rate that is NaN,
// infinite or negative is InvalidArgument "<where>: learning_rate must be
// finite and >= 0, got <rate>" and changes nothing.
absl::Status AssignLearningRate(Session& session, const LearningRateNodes& lr,
                                float rate, const std::string& where);

// The optimizer's step count, from its int64 variable's read
// (UpdateNodes::iterations_read).
absl::StatusOr<int64_t> ReadIterations(Session& session,
                                       const Output& iterations);

// One Fit's rates from a schedule: the step count is read once when the fit
// starts (Start) and counted by NextRate, as the step's own update adds 1
// to the variable. Fit feeds each rate to the learning rate's read
// (LearningRateNodes::read) in the step's own run, so a schedule costs no
// run of its own and leaves the variable as it was.
class ScheduledRate {
 public:
  static absl::StatusOr<ScheduledRate> Start(Session& session,
                                             LearningRateSchedule schedule,
                                             const Output& iterations);

  // The rate of the step about to run, the schedule's at its step count;
  // then counts the step. A rate that is not finite or is negative is
  // InvalidArgument naming `where`, the schedule and the step.
  absl::StatusOr<float> NextRate(const std::string& where);

 private:
  ScheduledRate(LearningRateSchedule schedule, int64_t step)
      : schedule_(std::move(schedule)), step_(step) {}

  LearningRateSchedule schedule_;
  int64_t step_;
};

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SCHEDULED_LEARNING_RATE_H_
