#include "models/scheduled_learning_rate.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/tensor.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

namespace {

// A rate the update ops may take: finite and >= 0.
bool UsableRate(float rate) { return std::isfinite(rate) && rate >= 0; }

absl::Status BadRate(float rate, const std::string& where) {
  return absl::InvalidArgumentError(absl::StrCat(
      where, ": learning_rate must be finite and >= 0, got ", rate));
}

}  // namespace

absl::Status AssignLearningRate(Session& session, const LearningRateNodes& lr,
                                float rate, const std::string& where) {
  if (!UsableRate(rate)) return BadRate(rate, where);
  return session
      .Run({{lr.assign_value, Tensor::Scalar<float>(rate)}}, {}, {lr.assign})
      .status();
}

absl::StatusOr<int64_t> ReadIterations(Session& session,
                                       const Output& iterations) {
  GG_ASSIGN_OR_RETURN(std::vector<Tensor> out, session.Run({}, {iterations}));
  return out[0].data<int64_t>()[0];
}

absl::StatusOr<ScheduledRate> ScheduledRate::Start(
    Session& session, LearningRateSchedule schedule, const Output& iterations) {
  GG_ASSIGN_OR_RETURN(const int64_t step, ReadIterations(session, iterations));
  return ScheduledRate(std::move(schedule), step);
}

absl::StatusOr<float> ScheduledRate::NextRate(const std::string& where) {
  const float rate = static_cast<float>(schedule_.LearningRateAt(step_));
  // The schedule and step are named only in a refusal: a step's usual path
  // builds no string.
  if (!UsableRate(rate)) {
    return BadRate(rate, absl::StrCat(where, " (", schedule_.class_name(),
                                      " at step ", step_, ")"));
  }
  ++step_;
  return rate;
}

}  // namespace models_internal
}  // namespace graphgc
