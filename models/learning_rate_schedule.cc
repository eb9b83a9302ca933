#include "models/learning_rate_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using schedules::CosineDecay;
using schedules::CosineDecayRestarts;
using schedules::ExponentialDecay;
using schedules::InverseTimeDecay;
using schedules::PiecewiseConstantDecay;
using schedules::PolynomialDecay;

// The checks of one schedule's arguments, each error naming the schedule.
class Checks {
 public:
  explicit Checks(const char* schedule) : schedule_(schedule) {}

  // Keras's own check and message.
  absl::Status Steps(const char* arg, double value) const {
    if (value > 0 && std::isfinite(value)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(schedule_, ": Argument `", arg,
                     "` must be > 0. Received: ", arg, "=", value));
  }
  absl::Status Finite(const char* arg, double value) const {
    if (std::isfinite(value)) return absl::OkStatus();
    return Bad(arg, value, "finite");
  }
  // Finite and >= 0: a learning rate, warmup_steps, m_mul, alpha.
  absl::Status NonNegative(const char* arg, double value) const {
    if (std::isfinite(value) && value >= 0) return absl::OkStatus();
    return Bad(arg, value, "finite and >= 0");
  }
  absl::Status Bad(const std::string& arg, double value,
                   const char* rule) const {
    return Error(absl::StrCat(arg, " must be ", rule, ", got ", value));
  }
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(schedule_, ": ", what));
  }

 private:
  const char* schedule_;
};

// ExponentialDecay's and InverseTimeDecay's arguments, the same.
template <typename Decay>
absl::Status CheckRateDecay(const char* schedule, const Decay& o) {
  const Checks c(schedule);
  GG_RETURN_IF_ERROR(
      c.NonNegative("initial_learning_rate", o.initial_learning_rate));
  GG_RETURN_IF_ERROR(c.Steps("decay_steps", o.decay_steps));
  return c.NonNegative("decay_rate", o.decay_rate);
}

absl::Status Check(const ExponentialDecay& o) {
  return CheckRateDecay("ExponentialDecay", o);
}

absl::Status Check(const PiecewiseConstantDecay& o) {
  const Checks c("PiecewiseConstantDecay");
  if (o.boundaries.size() + 1 != o.values.size()) {
    return c.Error(absl::StrCat(
        "The length of boundaries should be 1 less than the length of "
        "values. Received: boundaries of length ",
        o.boundaries.size(), ", and values of length ", o.values.size(), "."));
  }
  for (size_t i = 0; i < o.boundaries.size(); ++i) {
    const std::string arg = absl::StrCat("boundaries[", i, "]");
    if (!std::isfinite(o.boundaries[i])) {
      return c.Bad(arg, o.boundaries[i], "finite");
    }
    if (i > 0 && !(o.boundaries[i] > o.boundaries[i - 1])) {
      return c.Bad(arg, o.boundaries[i],
                   "greater than the boundary before it (strictly "
                   "increasing)");
    }
  }
  for (size_t i = 0; i < o.values.size(); ++i) {
    if (!(std::isfinite(o.values[i]) && o.values[i] >= 0)) {
      return c.Bad(absl::StrCat("values[", i, "]"), o.values[i],
                   "finite and >= 0");
    }
  }
  return absl::OkStatus();
}

absl::Status Check(const InverseTimeDecay& o) {
  return CheckRateDecay("InverseTimeDecay", o);
}

absl::Status Check(const PolynomialDecay& o) {
  const Checks c("PolynomialDecay");
  GG_RETURN_IF_ERROR(
      c.NonNegative("initial_learning_rate", o.initial_learning_rate));
  GG_RETURN_IF_ERROR(c.Steps("decay_steps", o.decay_steps));
  GG_RETURN_IF_ERROR(c.NonNegative("end_learning_rate", o.end_learning_rate));
  return c.Finite("power", o.power);
}

absl::Status Check(const CosineDecay& o) {
  const Checks c("CosineDecay");
  GG_RETURN_IF_ERROR(
      c.NonNegative("initial_learning_rate", o.initial_learning_rate));
  GG_RETURN_IF_ERROR(c.Steps("decay_steps", o.decay_steps));
  GG_RETURN_IF_ERROR(c.NonNegative("alpha", o.alpha));
  if (o.warmup_target.has_value()) {
    GG_RETURN_IF_ERROR(c.NonNegative("warmup_target", *o.warmup_target));
  }
  return c.NonNegative("warmup_steps", o.warmup_steps);
}

absl::Status Check(const CosineDecayRestarts& o) {
  const Checks c("CosineDecayRestarts");
  GG_RETURN_IF_ERROR(
      c.NonNegative("initial_learning_rate", o.initial_learning_rate));
  GG_RETURN_IF_ERROR(c.Steps("first_decay_steps", o.first_decay_steps));
  if (!(std::isfinite(o.t_mul) && o.t_mul > 0)) {
    return c.Bad("t_mul", o.t_mul, "finite and > 0");
  }
  GG_RETURN_IF_ERROR(c.NonNegative("m_mul", o.m_mul));
  return c.NonNegative("alpha", o.alpha);
}

// step / decay_steps, floored with `staircase`.
double Progress(double step, double decay_steps, bool staircase) {
  const double p = step / decay_steps;
  return staircase ? std::floor(p) : p;
}

// Keras's cosine decay from `from` over `decay_steps`, at `step`.
double Cosine(double step, double decay_steps, double from, double alpha) {
  const double cosine =
      0.5 * (1.0 + std::cos(std::numbers::pi * (step / decay_steps)));
  return from * ((1 - alpha) * cosine + alpha);
}

double RateAt(const ExponentialDecay& o, double step) {
  return o.initial_learning_rate *
         std::pow(o.decay_rate, Progress(step, o.decay_steps, o.staircase));
}

double RateAt(const PiecewiseConstantDecay& o, double step) {
  // Keras casts the boundaries to the step's integer type.
  for (size_t i = 0; i < o.boundaries.size(); ++i) {
    if (step <= std::trunc(o.boundaries[i])) return o.values[i];
  }
  return o.values.back();
}

double RateAt(const InverseTimeDecay& o, double step) {
  return o.initial_learning_rate /
         (1.0 + o.decay_rate * Progress(step, o.decay_steps, o.staircase));
}

double RateAt(const PolynomialDecay& o, double step) {
  double decay_steps = o.decay_steps;
  if (o.cycle) {
    // The first multiple of decay_steps past the step (1 at step 0).
    decay_steps *= step == 0 ? 1.0 : std::ceil(step / o.decay_steps);
  } else {
    step = std::min(step, decay_steps);
  }
  const double p = step / decay_steps;
  return (o.initial_learning_rate - o.end_learning_rate) *
             std::pow(1 - p, o.power) +
         o.end_learning_rate;
}

double RateAt(const CosineDecay& o, double step) {
  if (!o.warmup_target.has_value()) {
    return Cosine(std::min(step, o.decay_steps), o.decay_steps,
                  o.initial_learning_rate, o.alpha);
  }
  step = std::min(step, o.decay_steps + o.warmup_steps);
  if (step < o.warmup_steps) {
    return (*o.warmup_target - o.initial_learning_rate) *
               (step / o.warmup_steps) +
           o.initial_learning_rate;
  }
  return Cosine(step - o.warmup_steps, o.decay_steps, *o.warmup_target,
                o.alpha);
}

double RateAt(const CosineDecayRestarts& o, double step) {
  double fraction = step / o.first_decay_steps;
  double restart;
  if (o.t_mul == 1.0) {
    restart = std::floor(fraction);
    fraction -= restart;
  } else {
    // Periods grow geometrically: the restart whose periods' sum passed
    // the fraction, and the fraction of that period done.
    restart = std::floor(std::log(1.0 - fraction * (1.0 - o.t_mul)) /
                         std::log(o.t_mul));
    const double done = (1.0 - std::pow(o.t_mul, restart)) / (1.0 - o.t_mul);
    fraction = (fraction - done) / std::pow(o.t_mul, restart);
  }
  const double cosine = 0.5 * std::pow(o.m_mul, restart) *
                        (1.0 + std::cos(std::numbers::pi * fraction));
  return o.initial_learning_rate * ((1 - o.alpha) * cosine + o.alpha);
}

}  // namespace

absl::StatusOr<LearningRateSchedule> LearningRateSchedule::Create(
    Options options) {
  GG_RETURN_IF_ERROR(
      std::visit([](const auto& o) { return Check(o); }, options));
  return LearningRateSchedule(std::move(options));
}

double LearningRateSchedule::LearningRateAt(int64_t step) const {
  const double s = static_cast<double>(step);
  return std::visit([s](const auto& o) { return RateAt(o, s); }, options_);
}

const char* LearningRateSchedule::class_name() const {
  struct Name {
    const char* operator()(const ExponentialDecay&) const {
      return "ExponentialDecay";
    }
    const char* operator()(const PiecewiseConstantDecay&) const {
      return "PiecewiseConstantDecay";
    }
    const char* operator()(const InverseTimeDecay&) const {
      return "InverseTimeDecay";
    }
    const char* operator()(const PolynomialDecay&) const {
      return "PolynomialDecay";
    }
    const char* operator()(const CosineDecay&) const { return "CosineDecay"; }
    const char* operator()(const CosineDecayRestarts&) const {
      return "CosineDecayRestarts";
    }
  };
  return std::visit(Name{}, options_);
}

}  // namespace graphgc
