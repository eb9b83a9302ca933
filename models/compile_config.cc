#include "models/compile_config.h"

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "models/learning_rate_schedule_config.h"
#include "models/loss_registry.h"
#include "models/optimizer_base.h"
#include "models/optimizer_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

Json OptimizerJson(const Optimizer& optimizer) {
  // No optimizer (never compiled) is written as Adam's defaults.
  const OptimizerKind* kind = FindOptimizerKind(optimizer);
  if (kind == nullptr) return OptimizerJson(optimizers::Adam());
  Json j = kind->write_config(optimizer);
  WriteBaseConfig(optimizer.base, j);
  // Keras writes a schedule in place of the rate.
  if (optimizer.learning_rate_schedule.has_value()) {
    j["config"]["learning_rate"] =
        ScheduleJson(*optimizer.learning_rate_schedule);
  }
  return j;
}

Json LossJson(const Loss& loss) {
  const LossKind* kind = FindLossKind(loss.kind);
  // No loss (never compiled) is written as MeanSquaredError named "none".
  if (kind == nullptr) {
    return KerasObject(
        "keras.losses", "MeanSquaredError",
        {{"name", loss.name()}, {"reduction", "sum_over_batch_size"}});
  }
  Json config = {
      {"name", kind->object_name.empty() ? kind->name : kind->object_name},
      {"reduction", loss.reduction}};
  if (kind->takes_from_logits) config["from_logits"] = loss.from_logits;
  // Written only when set: the configs of builds without label smoothing
  // stay byte for byte the same.
  if (kind->takes_label_smoothing && loss.label_smoothing != 0.f) {
    config["label_smoothing"] = FloatJson(loss.label_smoothing);
  }
  if (kind->takes_delta) config["delta"] = FloatJson(loss.delta);
  return KerasObject("keras.losses", kind->class_name.c_str(),
                     std::move(config));
}

// "adam" / {"class_name": "Adam", "config": {...}}.
absl::StatusOr<Optimizer> ReadOptimizer(const ConfigObject& compile) {
  const Json* j = compile.Find("optimizer");
  if (j == nullptr) return compile.Missing("optimizer");
  std::string class_name;
  if (j->is_string()) {
    class_name = j->get<std::string>();
  } else if (j->is_object()) {
    GG_ASSIGN_OR_RETURN(
        class_name,
        ConfigObject(*j, compile.where() + " optimizer").String("class_name"));
  } else {
    return compile.WrongType("optimizer", "a string or an object", *j);
  }
  const Json empty = Json::object();
  const Json* config = &empty;
  if (j->is_object()) {
    auto it = j->find("config");
    if (it != j->end()) {
      if (!it->is_object()) {
        return ConfigObject(*j, compile.where() + " optimizer")
            .WrongType("config", "an object", *it);
      }
      config = &*it;
    }
  }
  const OptimizerKind* kind = FindOptimizerKindByName(class_name);
  if (kind == nullptr) {
    return compile.Error(absl::StrCat("unknown optimizer '", class_name,
                                      "' (supported: ", KnownOptimizers(),
                                      ")"));
  }
  const std::string where = compile.where() + " optimizer config";
  // A serialised schedule as the rate: the kind reads the schedule's first
  // rate in its place.
  std::optional<LearningRateSchedule> schedule;
  Json with_rate;
  if (const auto it = config->find("learning_rate");
      it != config->end() && it->is_object()) {
    GG_ASSIGN_OR_RETURN(
        schedule, ReadSchedule(ConfigObject(*it, where + " learning_rate")));
    with_rate = *config;
    with_rate["learning_rate"] = schedule->LearningRateAt(0);
    config = &with_rate;
  }
  const ConfigObject c(*config, where);
  GG_ASSIGN_OR_RETURN(Optimizer optimizer, kind->read_config(c));
  GG_ASSIGN_OR_RETURN(optimizer.base, ReadBaseConfig(c));
  optimizer.learning_rate_schedule = std::move(schedule);
  return optimizer;
}

// "mse" / {"class_name": "MeanSquaredError", "config": {...}}: any name
// the loss registry knows, with the options the loss takes.
absl::StatusOr<Loss> ReadLoss(const ConfigObject& compile) {
  const Json* j = compile.Find("loss");
  if (j == nullptr) return compile.Missing("loss");
  Loss loss;
  if (j->is_string()) {
    loss.kind = j->get<std::string>();
  } else if (j->is_object()) {
    const ConfigObject object(*j, compile.where() + " loss");
    GG_ASSIGN_OR_RETURN(loss.kind, object.String("class_name"));
    if (object.Find("config") != nullptr) {
      GG_ASSIGN_OR_RETURN(ConfigObject config,
                          object.Child("config", object.where() + " config"));
      GG_ASSIGN_OR_RETURN(loss.from_logits, config.Bool("from_logits", false));
      GG_ASSIGN_OR_RETURN(loss.label_smoothing,
                          config.Float("label_smoothing", 0.f));
      GG_ASSIGN_OR_RETURN(loss.delta, config.Float("delta", 1.f));
      // Keras writes reduction=None as null.
      const Json* reduction = config.Find("reduction");
      if (reduction != nullptr && reduction->is_null()) {
        loss.reduction = "none";
      } else {
        GG_ASSIGN_OR_RETURN(loss.reduction,
                            config.String("reduction", loss.reduction));
      }
    }
  } else {
    return compile.WrongType("loss", "a string or an object", *j);
  }
  if (const LossKind* kind = FindLossKind(loss.kind); kind != nullptr) {
    loss.kind = kind->name;
  }
  if (absl::Status s = CheckLoss(loss).status(); !s.ok()) {
    return compile.Error(std::string(s.message()));
  }
  return loss;
}

}  // namespace

Json CompileJson(const SavedCompile& compile) {
  Json metrics = nullptr;
  if (!compile.metrics.empty()) metrics = compile.metrics;
  return {{"optimizer", OptimizerJson(compile.optimizer)},
          {"loss", LossJson(compile.loss)},
          {"loss_weights", nullptr},
          {"metrics", std::move(metrics)},
          {"weighted_metrics", nullptr},
          {"run_eagerly", false},
          {"steps_per_execution", 1},
          {"jit_compile", false}};
}

absl::StatusOr<CompileOptions> ReadCompile(const ConfigObject& compile) {
  CompileOptions out;
  GG_ASSIGN_OR_RETURN(out.optimizer, ReadOptimizer(compile));
  GG_ASSIGN_OR_RETURN(out.loss, ReadLoss(compile));
  const Json* metrics = compile.Find("metrics");
  if (metrics != nullptr && !metrics->is_null()) {
    if (!metrics->is_array()) {
      return compile.WrongType("metrics", "a list of strings or null",
                               *metrics);
    }
    for (const Json& m : *metrics) {
      if (!m.is_string()) {
        return compile.Error(absl::StrCat(
            "field 'metrics' must be a list of strings; it holds ", Shown(m)));
      }
      out.metrics.push_back(m.get<std::string>());
    }
  }
  return out;
}

}  // namespace models_internal
}  // namespace graphgc
