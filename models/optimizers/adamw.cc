// AdamW (keras/src/optimizers/adamw.py): Adam whose weight decay defaults
// to 0.004; the decay itself is the base optimizer's (optimizer_base.h).
#include <variant>

#include "models/optimizer_base.h"
#include "models/optimizer_registry.h"
#include "models/optimizers/adam.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

constexpr float kDefaultWeightDecay = 0.004f;

AdamOptions AsAdam(const Optimizer& optimizer) {
  const AdamWOptions& o = std::get<AdamWOptions>(optimizer.options);
  return {.learning_rate = o.learning_rate,
          .beta_1 = o.beta_1,
          .beta_2 = o.beta_2,
          .epsilon = o.epsilon,
          .amsgrad = o.amsgrad};
}

Json WriteAdamWConfig(const Optimizer& optimizer) {
  Json j = AdamConfig("AdamW", "adamw", AsAdam(optimizer));
  // Keras's AdamW always writes its weight decay.
  j["config"]["weight_decay"] =
      FloatJson(optimizer.base.weight_decay.value_or(kDefaultWeightDecay));
  return j;
}

absl::StatusOr<Optimizer> ReadAdamWConfig(const ConfigObject& c) {
  GG_ASSIGN_OR_RETURN(AdamOptions a, ReadAdamOptions(c));
  return optimizers::AdamW({.learning_rate = a.learning_rate,
                            .beta_1 = a.beta_1,
                            .beta_2 = a.beta_2,
                            .epsilon = a.epsilon,
                            .amsgrad = a.amsgrad});
}

}  // namespace

const OptimizerKind& AdamWKind() {
  static const OptimizerKind* kind = new OptimizerKind{
      .class_name = "AdamW",
      .keras_name = "adamw",
      .holds =
          [](const Optimizer& o) {
            return std::holds_alternative<AdamWOptions>(o.options);
          },
      .learning_rate =
          [](Optimizer& o) {
            return &std::get<AdamWOptions>(o.options).learning_rate;
          },
      .check =
          [](const Optimizer& o) {
            return CheckAdamOptions("AdamW", AsAdam(o));
          },
      .slots_per_weight =
          [](const Optimizer& o) { return AsAdam(o).amsgrad ? 3 : 2; },
      .write_config = WriteAdamWConfig,
      .read_config = ReadAdamWConfig,
      .build =
          [](const Optimizer& o, const UpdateInputs& in) {
            return BuildAdamUpdates(AsAdam(o), "AdamW", in);
          },
      .default_weight_decay = kDefaultWeightDecay,
      .state_layout =
          [](const Optimizer& o) { return AdamStateLayout(AsAdam(o)); },
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer AdamW(AdamWOptions options, BaseOptimizerOptions base) {
  return Optimizer{.options = options, .base = base};
}
}  // namespace optimizers

}  // namespace graphgc
