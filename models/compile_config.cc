#include "models/compile_config.h"

#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "models/optimizer_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

Json OptimizerJson(const Optimizer& optimizer) {
  // No optimizer (never compiled) is written as Adam's defaults.
  const OptimizerKind* kind = FindOptimizerKind(optimizer);
  if (kind == nullptr) return OptimizerJson(optimizers::Adam());
  return kind->write_config(optimizer);
}

Json LossJson(const Loss& loss) {
  const char* class_name = "MeanSquaredError";
  Json config = {{"name", loss.name()}, {"reduction", "sum_over_batch_size"}};
  if (loss.kind == Loss::Kind::kSparseCategoricalCrossentropy) {
    class_name = "SparseCategoricalCrossentropy";
  } else if (loss.kind == Loss::Kind::kCategoricalCrossentropy) {
    class_name = "CategoricalCrossentropy";
  }
  if (loss.kind != Loss::Kind::kMeanSquaredError) {
    config["from_logits"] = loss.from_logits;
  }
  return KerasObject("keras.losses", class_name, std::move(config));
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
  return kind->read_config(
      ConfigObject(*config, compile.where() + " optimizer config"));
}

// "mse" / {"class_name": "MeanSquaredError", "config": {...}}.
absl::StatusOr<Loss> ReadLoss(const ConfigObject& compile) {
  const Json* j = compile.Find("loss");
  if (j == nullptr) return compile.Missing("loss");
  std::string name;
  bool from_logits = false;
  if (j->is_string()) {
    name = j->get<std::string>();
  } else if (j->is_object()) {
    const ConfigObject loss(*j, compile.where() + " loss");
    GG_ASSIGN_OR_RETURN(name, loss.String("class_name"));
    if (loss.Find("config") != nullptr) {
      GG_ASSIGN_OR_RETURN(ConfigObject config,
                          loss.Child("config", loss.where() + " config"));
      GG_ASSIGN_OR_RETURN(from_logits, config.Bool("from_logits", false));
    }
  } else {
    return compile.WrongType("loss", "a string or an object", *j);
  }
  const CrossentropyOptions ce{.from_logits = from_logits};
  if (name == "SparseCategoricalCrossentropy" ||
      name == "sparse_categorical_crossentropy") {
    return losses::SparseCategoricalCrossentropy(ce);
  }
  if (name == "CategoricalCrossentropy" || name == "categorical_crossentropy") {
    return losses::CategoricalCrossentropy(ce);
  }
  if (name == "MeanSquaredError" || name == "mean_squared_error" ||
      name == "mse") {
    return losses::MeanSquaredError();
  }
  return compile.Error(absl::StrCat(
      "unknown loss '", name,
      "' (supported: SparseCategoricalCrossentropy, CategoricalCrossentropy, "
      "MeanSquaredError)"));
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
