// models/learning_rate_schedule.h
//
// Keras 3's learning-rate schedules (keras.optimizers.schedules): the rate
// of an optimizer step as a function of the optimizer's step count
// (`iterations`, 0 at the first step). An optimizer given one
// (Optimizer::learning_rate_schedule) has its rate set from it before every
// training step; its fixed learning_rate is then unused.
//
//   ExponentialDecay:       initial * decay_rate^(step / decay_steps)
//   PiecewiseConstantDecay: values[0] while step <= boundaries[0], values[i]
//                           while boundaries[i-1] < step <= boundaries[i],
//                           values.back() past the last boundary
//   InverseTimeDecay:       initial / (1 + decay_rate * step / decay_steps)
//   PolynomialDecay:        (initial - end) * (1 - step / decay_steps)^power
//                           + end, step capped at decay_steps (cycle: over
//                           decay_steps * ceil(step / decay_steps) instead,
//                           1 at step 0)
//   CosineDecay:            initial * ((1 - alpha) * 0.5 * (1 + cos(pi *
//                           min(step, decay_steps) / decay_steps)) + alpha);
//                           with warmup_target, a linear warmup from initial
//                           to warmup_target over warmup_steps, then the
//                           decay from warmup_target
//   CosineDecayRestarts:    the cosine decay restarted after
//                           first_decay_steps, each period t_mul times longer
//                           and m_mul times higher
//
// (staircase: step / decay_steps floored.) The arithmetic is Keras's, in
// double precision (Keras computes in the initial rate's float32).
#ifndef GRAPHGC_MODELS_LEARNING_RATE_SCHEDULE_H_
#define GRAPHGC_MODELS_LEARNING_RATE_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace graphgc {
namespace schedules {

// Each schedule's Keras arguments, with Keras's defaults and names.
struct ExponentialDecay {
  double initial_learning_rate = 0;
  double decay_steps = 1;
  double decay_rate = 1;
  bool staircase = false;
  std::string name = "ExponentialDecay";
  bool operator==(const ExponentialDecay&) const = default;
};

struct PiecewiseConstantDecay {
  std::vector<double> boundaries;  // strictly increasing
  std::vector<double> values;      // one more than boundaries
  std::string name = "PiecewiseConstant";
  bool operator==(const PiecewiseConstantDecay&) const = default;
};

struct InverseTimeDecay {
  double initial_learning_rate = 0;
  double decay_steps = 1;
  double decay_rate = 1;
  bool staircase = false;
  std::string name = "InverseTimeDecay";
  bool operator==(const InverseTimeDecay&) const = default;
};

struct PolynomialDecay {
  double initial_learning_rate = 0;
  double decay_steps = 1;
  double end_learning_rate = 0.0001;
  double power = 1.0;
  bool cycle = false;
  std::string name = "PolynomialDecay";
  bool operator==(const PolynomialDecay&) const = default;
};

struct CosineDecay {
  double initial_learning_rate = 0;
  double decay_steps = 1;
  double alpha = 0.0;
  std::optional<double> warmup_target;  // unset: no warmup
  double warmup_steps = 0;
  std::string name = "CosineDecay";
  bool operator==(const CosineDecay&) const = default;
};

struct CosineDecayRestarts {
  double initial_learning_rate = 0;
  double first_decay_steps = 1;
  double t_mul = 2.0;
  double m_mul = 1.0;
  double alpha = 0.0;
  std::string name = "SGDRDecay";
  bool operator==(const CosineDecayRestarts&) const = default;
};

}  // namespace schedules

// One schedule, checked: a value type.
class LearningRateSchedule {
 public:
  using Options =
      std::variant<schedules::ExponentialDecay,
                   schedules::PiecewiseConstantDecay,
                   schedules::InverseTimeDecay, schedules::PolynomialDecay,
                   schedules::CosineDecay, schedules::CosineDecayRestarts>;

  // The schedule, or InvalidArgument naming the schedule and the argument:
  // decay_steps (first_decay_steps) must be > 0 (Keras's check); every
  // number finite; learning rates (initial, end, values, warmup_target)
  // >= 0; boundaries strictly increasing and one fewer than values;
  // warmup_steps >= 0; t_mul > 0, m_mul >= 0 and alpha >= 0 (a
  // rate below 0 or not finite is refused by the fit that reaches it).
  static absl::StatusOr<LearningRateSchedule> Create(Options options);

  // The rate at optimizer step `step` (>= 0).
  double LearningRateAt(int64_t step) const;

  // Keras's class name: "ExponentialDecay", ...
  const char* class_name() const;

  const Options& options() const { return options_; }

  bool operator==(const LearningRateSchedule&) const = default;

 private:
  explicit LearningRateSchedule(Options options)
      : options_(std::move(options)) {}

  Options options_;
};

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LEARNING_RATE_SCHEDULE_H_
