// Adagrad (keras/src/optimizers/adagrad.py): an accumulator per weight,
// starting at initial_accumulator_value:
//   accumulator += g^2;  w -= lr * g / sqrt(accumulator + epsilon).
#include <algorithm>
#include <cmath>
#include <variant>

#include "models/optimizer_registry.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const AdagradOptions& Options(const Optimizer& o) {
  return std::get<AdagradOptions>(o.options);
}

absl::Status CheckAdagrad(const Optimizer& optimizer) {
  const AdagradOptions& o = Options(optimizer);
  GG_RETURN_IF_ERROR(CheckLearningRate("Adagrad", o.learning_rate));
  // Written so that NaN fails too.
  if (!std::isfinite(o.initial_accumulator_value) ||
      !(o.initial_accumulator_value >= 0)) {
    return BadOption("Adagrad initial_accumulator_value",
                     o.initial_accumulator_value, "finite and >= 0");
  }
  if (!std::isfinite(o.epsilon) || !(o.epsilon > 0)) {
    return BadOption("Adagrad epsilon", o.epsilon, "finite and > 0");
  }
  return absl::OkStatus();
}

Json WriteAdagradConfig(const Optimizer& optimizer) {
  const AdagradOptions& o = Options(optimizer);
  return KerasObject(
      "keras.optimizers", "Adagrad",
      {{"name", "adagrad"},
       {"learning_rate", FloatJson(o.learning_rate)},
       {"initial_accumulator_value", FloatJson(o.initial_accumulator_value)},
       {"epsilon", FloatJson(o.epsilon)}});
}

absl::StatusOr<Optimizer> ReadAdagradConfig(const ConfigObject& c) {
  AdagradOptions o;
  GG_ASSIGN_OR_RETURN(o.learning_rate,
                      c.Float("learning_rate", o.learning_rate));
  GG_ASSIGN_OR_RETURN(
      o.initial_accumulator_value,
      c.Float("initial_accumulator_value", o.initial_accumulator_value));
  GG_ASSIGN_OR_RETURN(o.epsilon, c.Float("epsilon", o.epsilon));
  return optimizers::Adagrad(o);
}

absl::StatusOr<OptimizerUpdates> BuildAdagrad(const Optimizer& optimizer,
                                              const UpdateInputs& in) {
  const AdagradOptions& o = Options(optimizer);
  Graph& g = in.graph;
  const std::string s = in.scope + "/Adagrad";
  OptimizerUpdates out;
  GG_ASSIGN_OR_RETURN(Output eps, ScalarConst(g, o.epsilon, s + "/epsilon"));
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = SlotBase(s, in.variables[i]);
    const std::string name = base + "/accumulator";
    GG_ASSIGN_OR_RETURN(Tensor init, NewTensor(DT_FLOAT, in.shapes[i],
                                               /*zero=*/false, name));
    absl::Span<float> values = init.mutable_data<float>();
    std::fill(values.begin(), values.end(), o.initial_accumulator_value);
    GG_ASSIGN_OR_RETURN(Output acc, SlotVariable(g, name, init, in.session));
    GG_ASSIGN_OR_RETURN(Output old,
                        ops::ReadVariableOp(acc, {.name = name + "/Read",
                                                  .control_inputs = in.after}));
    GG_ASSIGN_OR_RETURN(Output g2,
                        ops::Square(in.grads[i], {.name = base + "/Square"}));
    GG_ASSIGN_OR_RETURN(Output sum, ops::Add(old, g2, {.name = name + "/add"}));
    GG_ASSIGN_OR_RETURN(
        Output set_acc,
        ops::AssignVariableOp(acc, sum, {.name = name + "/Update"}));
    GG_ASSIGN_OR_RETURN(Output denom,
                        ops::Add(sum, eps, {.name = base + "/add"}));
    GG_ASSIGN_OR_RETURN(Output root,
                        ops::Sqrt(denom, {.name = base + "/Sqrt"}));
    GG_ASSIGN_OR_RETURN(Output lg,
                        ops::Mul(in.lr, in.grads[i], {.name = base + "/mul"}));
    GG_ASSIGN_OR_RETURN(Output step,
                        ops::RealDiv(lg, root, {.name = base + "/truediv"}));
    GG_ASSIGN_OR_RETURN(Output apply,
                        ops::AssignSubVariableOp(in.variables[i], step,
                                                 {.name = base + "/Update",
                                                  .control_inputs = in.after}));
    out.updates.push_back(set_acc.handle());
    out.updates.push_back(apply.handle());
  }
  return out;
}

}  // namespace

const OptimizerKind& AdagradKind() {
  static const OptimizerKind* kind = new OptimizerKind{
      .class_name = "Adagrad",
      .keras_name = "adagrad",
      .holds =
          [](const Optimizer& o) {
            return std::holds_alternative<AdagradOptions>(o.options);
          },
      .learning_rate =
          [](Optimizer& o) {
            return &std::get<AdagradOptions>(o.options).learning_rate;
          },
      .check = CheckAdagrad,
      .slots_per_weight = [](const Optimizer&) { return 1; },
      .write_config = WriteAdagradConfig,
      .read_config = ReadAdagradConfig,
      .build = BuildAdagrad,
      .state_layout =
          [](const Optimizer&) {
            return OptimizerStateLayout{.slot_groups = {{"accumulator"}}};
          },
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer Adagrad(AdagradOptions options, BaseOptimizerOptions base) {
  return Optimizer{.options = options, .base = base};
}
}  // namespace optimizers

}  // namespace graphgc
