#include "models/learning_rate_schedule_config.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

using schedules::CosineDecay;
using schedules::CosineDecayRestarts;
using schedules::ExponentialDecay;
using schedules::InverseTimeDecay;
using schedules::PiecewiseConstantDecay;
using schedules::PolynomialDecay;

// A step count or boundary as Keras's Python int when it is whole.
Json StepJson(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9007199254740992.0) {
    return static_cast<int64_t>(v);
  }
  return v;
}

Json StepsJson(const std::vector<double>& v) {
  Json out = Json::array();
  for (double x : v) out.push_back(StepJson(x));
  return out;
}

struct ConfigOf {
  Json operator()(const ExponentialDecay& o) const {
    return {{"initial_learning_rate", o.initial_learning_rate},
            {"decay_steps", StepJson(o.decay_steps)},
            {"decay_rate", o.decay_rate},
            {"staircase", o.staircase},
            {"name", o.name}};
  }
  Json operator()(const PiecewiseConstantDecay& o) const {
    return {{"boundaries", StepsJson(o.boundaries)},
            {"values", o.values},
            {"name", o.name}};
  }
  Json operator()(const InverseTimeDecay& o) const {
    return {{"initial_learning_rate", o.initial_learning_rate},
            {"decay_steps", StepJson(o.decay_steps)},
            {"decay_rate", o.decay_rate},
            {"staircase", o.staircase},
            {"name", o.name}};
  }
  Json operator()(const PolynomialDecay& o) const {
    return {{"initial_learning_rate", o.initial_learning_rate},
            {"decay_steps", StepJson(o.decay_steps)},
            {"end_learning_rate", o.end_learning_rate},
            {"power", o.power},
            {"cycle", o.cycle},
            {"name", o.name}};
  }
  Json operator()(const CosineDecay& o) const {
    return {
        {"initial_learning_rate", o.initial_learning_rate},
        {"decay_steps", StepJson(o.decay_steps)},
        {"alpha", o.alpha},
        {"name", o.name},
        {"warmup_target",
         o.warmup_target.has_value() ? Json(*o.warmup_target) : Json(nullptr)},
        {"warmup_steps", StepJson(o.warmup_steps)}};
  }
  Json operator()(const CosineDecayRestarts& o) const {
    return {{"initial_learning_rate", o.initial_learning_rate},
            {"first_decay_steps", StepJson(o.first_decay_steps)},
            {"t_mul", o.t_mul},
            {"m_mul", o.m_mul},
            {"alpha", o.alpha},
            {"name", o.name}};
  }
};

// A number field: required without a fallback; absent (or null, with a
// fallback) is the fallback.
absl::StatusOr<double> Number(const ConfigObject& c, const char* key,
                              std::optional<double> fallback = std::nullopt) {
  const Json* j = c.Find(key);
  if (j == nullptr || (fallback.has_value() && j->is_null())) {
    if (fallback.has_value()) return *fallback;
    return c.Missing(key);
  }
  if (!j->is_number()) return c.WrongType(key, "a number", *j);
  return j->get<double>();
}

absl::StatusOr<std::vector<double>> Numbers(const ConfigObject& c,
                                            const char* key) {
  const Json* j = c.Find(key);
  if (j == nullptr) return c.Missing(key);
  if (!j->is_array()) return c.WrongType(key, "a list of numbers", *j);
  std::vector<double> out;
  for (const Json& x : *j) {
    if (!x.is_number()) return c.WrongType(key, "a list of numbers", *j);
    out.push_back(x.get<double>());
  }
  return out;
}

template <typename T>
absl::Status ReadName(const ConfigObject& c, T& o) {
  GG_ASSIGN_OR_RETURN(o.name, c.String("name", o.name));
  return absl::OkStatus();
}

absl::StatusOr<LearningRateSchedule::Options> ReadOptions(
    const std::string& class_name, const ConfigObject& c) {
  if (class_name == "ExponentialDecay" || class_name == "InverseTimeDecay") {
    ExponentialDecay o;
    GG_ASSIGN_OR_RETURN(o.initial_learning_rate,
                        Number(c, "initial_learning_rate"));
    GG_ASSIGN_OR_RETURN(o.decay_steps, Number(c, "decay_steps"));
    GG_ASSIGN_OR_RETURN(o.decay_rate, Number(c, "decay_rate"));
    GG_ASSIGN_OR_RETURN(o.staircase, c.Bool("staircase", false));
    if (class_name == "ExponentialDecay") {
      GG_RETURN_IF_ERROR(ReadName(c, o));
      return o;
    }
    InverseTimeDecay t{.initial_learning_rate = o.initial_learning_rate,
                       .decay_steps = o.decay_steps,
                       .decay_rate = o.decay_rate,
                       .staircase = o.staircase};
    GG_RETURN_IF_ERROR(ReadName(c, t));
    return t;
  }
  if (class_name == "PiecewiseConstantDecay") {
    PiecewiseConstantDecay o;
    GG_ASSIGN_OR_RETURN(o.boundaries, Numbers(c, "boundaries"));
    GG_ASSIGN_OR_RETURN(o.values, Numbers(c, "values"));
    GG_RETURN_IF_ERROR(ReadName(c, o));
    return o;
  }
  if (class_name == "PolynomialDecay") {
    PolynomialDecay o;
    GG_ASSIGN_OR_RETURN(o.initial_learning_rate,
                        Number(c, "initial_learning_rate"));
    GG_ASSIGN_OR_RETURN(o.decay_steps, Number(c, "decay_steps"));
    GG_ASSIGN_OR_RETURN(o.end_learning_rate,
                        Number(c, "end_learning_rate", o.end_learning_rate));
    GG_ASSIGN_OR_RETURN(o.power, Number(c, "power", o.power));
    GG_ASSIGN_OR_RETURN(o.cycle, c.Bool("cycle", o.cycle));
    GG_RETURN_IF_ERROR(ReadName(c, o));
    return o;
  }
  if (class_name == "CosineDecay") {
    CosineDecay o;
    GG_ASSIGN_OR_RETURN(o.initial_learning_rate,
                        Number(c, "initial_learning_rate"));
    GG_ASSIGN_OR_RETURN(o.decay_steps, Number(c, "decay_steps"));
    GG_ASSIGN_OR_RETURN(o.alpha, Number(c, "alpha", o.alpha));
    const Json* target = c.Find("warmup_target");
    if (target != nullptr && !target->is_null()) {
      GG_ASSIGN_OR_RETURN(o.warmup_target, Number(c, "warmup_target"));
    }
    GG_ASSIGN_OR_RETURN(o.warmup_steps,
                        Number(c, "warmup_steps", o.warmup_steps));
    GG_RETURN_IF_ERROR(ReadName(c, o));
    return o;
  }
  if (class_name == "CosineDecayRestarts") {
    CosineDecayRestarts o;
    GG_ASSIGN_OR_RETURN(o.initial_learning_rate,
                        Number(c, "initial_learning_rate"));
    GG_ASSIGN_OR_RETURN(o.first_decay_steps, Number(c, "first_decay_steps"));
    GG_ASSIGN_OR_RETURN(o.t_mul, Number(c, "t_mul", o.t_mul));
    GG_ASSIGN_OR_RETURN(o.m_mul, Number(c, "m_mul", o.m_mul));
    GG_ASSIGN_OR_RETURN(o.alpha, Number(c, "alpha", o.alpha));
    GG_RETURN_IF_ERROR(ReadName(c, o));
    return o;
  }
  return c.Error(absl::StrCat(
      "unknown learning-rate schedule '", class_name,
      "' (supported: CosineDecay, CosineDecayRestarts, ExponentialDecay, "
      "InverseTimeDecay, PiecewiseConstantDecay, PolynomialDecay)"));
}

}  // namespace

Json ScheduleJson(const LearningRateSchedule& schedule) {
  return KerasObject("keras.optimizers.schedules", schedule.class_name(),
                     std::visit(ConfigOf{}, schedule.options()));
}

absl::StatusOr<LearningRateSchedule> ReadSchedule(const ConfigObject& object) {
  GG_ASSIGN_OR_RETURN(const std::string class_name,
                      object.String("class_name"));
  const Json empty = Json::object();
  const Json* config = object.Find("config");
  if (config == nullptr) config = &empty;
  if (!config->is_object()) {
    return object.WrongType("config", "an object", *config);
  }
  GG_ASSIGN_OR_RETURN(
      LearningRateSchedule::Options options,
      ReadOptions(class_name,
                  ConfigObject(*config, absl::StrCat(object.where(), " (",
                                                     class_name, ") config"))));
  absl::StatusOr<LearningRateSchedule> schedule =
      LearningRateSchedule::Create(std::move(options));
  if (!schedule.ok())
    return object.Error(std::string(schedule.status().message()));
  return schedule;
}

}  // namespace models_internal
}  // namespace graphgc
