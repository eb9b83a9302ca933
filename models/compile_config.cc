#include "models/compile_config.h"

#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

Json OptimizerJson(const Optimizer& optimizer) {
  if (const auto* sgd = std::get_if<SGDOptions>(&optimizer.options)) {
    const SGDOptions& o = *sgd;
    return KerasObject("keras.optimizers", "SGD",
                       {{"name", "SGD"},
                        {"learning_rate", FloatJson(o.learning_rate)},
                        {"momentum", FloatJson(o.momentum)},
                        {"nesterov", o.nesterov}});
  }
  // Adam; no optimizer (never compiled) is written as Adam's defaults.
  const auto* adam = std::get_if<AdamOptions>(&optimizer.options);
  const AdamOptions o = adam != nullptr ? *adam : AdamOptions{};
  return KerasObject("keras.optimizers", "Adam",
                     {{"name", "adam"},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"beta_1", FloatJson(o.beta_1)},
                      {"beta_2", FloatJson(o.beta_2)},
                      {"epsilon", FloatJson(o.epsilon)},
                      {"amsgrad", false}});
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
absl::StatusOr<Optimizer> ReadOptimizer(const Object& compile) {
  const Json* j = compile.Find("optimizer");
  if (j == nullptr) return compile.Missing("optimizer");
  std::string class_name;
  if (j->is_string()) {
    class_name = j->get<std::string>();
  } else if (j->is_object()) {
    GG_ASSIGN_OR_RETURN(
        class_name,
        Object(*j, compile.where() + " optimizer").String("class_name"));
  } else {
    return compile.WrongType("optimizer", "a string or an object", *j);
  }
  const Json empty = Json::object();
  const Json* config = &empty;
  if (j->is_object()) {
    auto it = j->find("config");
    if (it != j->end()) {
      if (!it->is_object()) {
        return Object(*j, compile.where() + " optimizer")
            .WrongType("config", "an object", *it);
      }
      config = &*it;
    }
  }
  const Object c(*config, compile.where() + " optimizer config");
  if (class_name == "Adam" || class_name == "adam") {
    AdamOptions o;
    GG_ASSIGN_OR_RETURN(o.learning_rate,
                        c.Float("learning_rate", o.learning_rate));
    GG_ASSIGN_OR_RETURN(o.beta_1, c.Float("beta_1", o.beta_1));
    GG_ASSIGN_OR_RETURN(o.beta_2, c.Float("beta_2", o.beta_2));
    GG_ASSIGN_OR_RETURN(o.epsilon, c.Float("epsilon", o.epsilon));
    return optimizers::Adam(o);
  }
  if (class_name == "SGD" || class_name == "sgd") {
    SGDOptions o;
    GG_ASSIGN_OR_RETURN(o.learning_rate,
                        c.Float("learning_rate", o.learning_rate));
    GG_ASSIGN_OR_RETURN(o.momentum, c.Float("momentum", o.momentum));
    GG_ASSIGN_OR_RETURN(o.nesterov, c.Bool("nesterov", o.nesterov));
    return optimizers::SGD(o);
  }
  return compile.Error(absl::StrCat("unknown optimizer '", class_name,
                                    "' (supported: Adam, SGD)"));
}

// "mse" / {"class_name": "MeanSquaredError", "config": {...}}.
absl::StatusOr<Loss> ReadLoss(const Object& compile) {
  const Json* j = compile.Find("loss");
  if (j == nullptr) return compile.Missing("loss");
  std::string name;
  bool from_logits = false;
  if (j->is_string()) {
    name = j->get<std::string>();
  } else if (j->is_object()) {
    const Object loss(*j, compile.where() + " loss");
    GG_ASSIGN_OR_RETURN(name, loss.String("class_name"));
    if (loss.Find("config") != nullptr) {
      GG_ASSIGN_OR_RETURN(Object config,
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

absl::StatusOr<CompileOptions> ReadCompile(const Object& compile) {
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
