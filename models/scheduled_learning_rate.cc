#include "models/scheduled_learning_rate.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/tensor.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

absl::Status AssignLearningRate(Session& session, const LearningRateNodes& lr,
                                float rate, const std::string& where) {
  if (!std::isfinite(rate) || rate < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": learning_rate must be finite and >= 0, got ", rate));
  }
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
    Session& session, LearningRateSchedule schedule, LearningRateNodes lr,
    const Output& iterations) {
  GG_ASSIGN_OR_RETURN(const int64_t step, ReadIterations(session, iterations));
  return ScheduledRate(std::move(schedule), std::move(lr), step);
}

absl::Status ScheduledRate::BeforeStep(Session& session,
                                       const std::string& where) {
  const float rate = static_cast<float>(schedule_.LearningRateAt(step_));
  GG_RETURN_IF_ERROR(
      AssignLearningRate(session, lr_, rate,
                         absl::StrCat(where, " (", schedule_.class_name(),
                                      " at step ", step_, ")")));
  ++step_;
  return absl::OkStatus();
}

}  // namespace models_internal
}  // namespace graphgc
