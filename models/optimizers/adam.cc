// Adam: m and v per weight and TensorFlow's ResourceApplyAdam, whose step
// size lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) is Keras's bias correction.
#include <cmath>
#include <variant>

#include "models/optimizer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const AdamOptions& Options(const Optimizer& o) {
  return std::get<AdamOptions>(o.options);
}

absl::Status CheckAdam(const Optimizer& optimizer) {
  const AdamOptions& o = Options(optimizer);
  GG_RETURN_IF_ERROR(CheckLearningRate("Adam", o.learning_rate));
  // Written so that NaN fails too.
  if (!(o.beta_1 >= 0 && o.beta_1 < 1)) {
    return BadOption("Adam beta_1", o.beta_1, "in [0, 1)");
  }
  if (!(o.beta_2 >= 0 && o.beta_2 < 1)) {
    return BadOption("Adam beta_2", o.beta_2, "in [0, 1)");
  }
  if (!std::isfinite(o.epsilon) || !(o.epsilon > 0)) {
    return BadOption("Adam epsilon", o.epsilon, "finite and > 0");
  }
  return absl::OkStatus();
}

Json WriteAdamConfig(const Optimizer& optimizer) {
  const AdamOptions& o = Options(optimizer);
  return KerasObject("keras.optimizers", "Adam",
                     {{"name", "adam"},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"beta_1", FloatJson(o.beta_1)},
                      {"beta_2", FloatJson(o.beta_2)},
                      {"epsilon", FloatJson(o.epsilon)},
                      {"amsgrad", false}});
}

absl::StatusOr<Optimizer> ReadAdamConfig(const ConfigObject& c) {
  AdamOptions o;
  GG_ASSIGN_OR_RETURN(o.learning_rate,
                      c.Float("learning_rate", o.learning_rate));
  GG_ASSIGN_OR_RETURN(o.beta_1, c.Float("beta_1", o.beta_1));
  GG_ASSIGN_OR_RETURN(o.beta_2, c.Float("beta_2", o.beta_2));
  GG_ASSIGN_OR_RETURN(o.epsilon, c.Float("epsilon", o.epsilon));
  return optimizers::Adam(o);
}

// Under "<scope>/Adam": m and v per weight, ResourceApplyAdam, then beta_1^t
// and beta_2^t advanced once every weight has used them.
absl::StatusOr<OptimizerUpdates> BuildAdam(const Optimizer& optimizer,
                                           const UpdateInputs& in) {
  const AdamOptions& o = Options(optimizer);
  Graph& g = in.graph;
  const std::string s = in.scope + "/Adam";
  OptimizerUpdates out;
  GG_ASSIGN_OR_RETURN(out.learning_rate,
                      LearningRateVariable(g, s, o.learning_rate, in.session));
  const Output lr = out.learning_rate.read;
  GG_ASSIGN_OR_RETURN(Output b1,
                      ops::Const(g, o.beta_1, {.name = s + "/beta_1"}));
  GG_ASSIGN_OR_RETURN(Output b2,
                      ops::Const(g, o.beta_2, {.name = s + "/beta_2"}));
  GG_ASSIGN_OR_RETURN(Output eps,
                      ops::Const(g, o.epsilon, {.name = s + "/epsilon"}));
  // beta^t for the step being taken: starts at beta (t = 1).
  GG_ASSIGN_OR_RETURN(
      Output b1_power,
      SlotVariable(g, s + "/beta_1_power", Tensor::Scalar<float>(o.beta_1),
                   in.session));
  GG_ASSIGN_OR_RETURN(
      Output b2_power,
      SlotVariable(g, s + "/beta_2_power", Tensor::Scalar<float>(o.beta_2),
                   in.session));
  GG_ASSIGN_OR_RETURN(
      Output b1p,
      ops::ReadVariableOp(b1_power, {.name = s + "/beta_1_power/Read"}));
  GG_ASSIGN_OR_RETURN(
      Output b2p,
      ops::ReadVariableOp(b2_power, {.name = s + "/beta_2_power/Read"}));
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = SlotBase(s, in.variables[i]);
    GG_ASSIGN_OR_RETURN(Output m, ZeroSlot(in, i, base, "m"));
    GG_ASSIGN_OR_RETURN(Output v, ZeroSlot(in, i, base, "v"));
    GG_ASSIGN_OR_RETURN(
        Output apply,
        ops::ResourceApplyAdam(
            in.variables[i], m, v, b1p, b2p, lr, b1, b2, eps, in.grads[i],
            {.name = base + "/ResourceApplyAdam", .control_inputs = in.after}));
    out.updates.push_back(apply.handle());
  }
  // Advance beta^t once every weight has used this step's value.
  std::vector<NodeHandle> applies = out.updates;
  GG_ASSIGN_OR_RETURN(
      Output b1_now,
      ops::ReadVariableOp(b1_power, {.name = s + "/beta_1_power/ReadForUpdate",
                                     .control_inputs = applies}));
  GG_ASSIGN_OR_RETURN(
      Output b2_now,
      ops::ReadVariableOp(b2_power, {.name = s + "/beta_2_power/ReadForUpdate",
                                     .control_inputs = applies}));
  GG_ASSIGN_OR_RETURN(Output b1_next,
                      ops::Mul(b1_now, b1, {.name = s + "/beta_1_power/mul"}));
  GG_ASSIGN_OR_RETURN(Output b2_next,
                      ops::Mul(b2_now, b2, {.name = s + "/beta_2_power/mul"}));
  GG_ASSIGN_OR_RETURN(
      Output u1, ops::AssignVariableOp(b1_power, b1_next,
                                       {.name = s + "/beta_1_power/Update"}));
  GG_ASSIGN_OR_RETURN(
      Output u2, ops::AssignVariableOp(b2_power, b2_next,
                                       {.name = s + "/beta_2_power/Update"}));
  out.updates.push_back(u1.handle());
  out.updates.push_back(u2.handle());
  return out;
}

}  // namespace

const OptimizerKind& AdamKind() {
  static const OptimizerKind* kind = new OptimizerKind{
      .class_name = "Adam",
      .keras_name = "adam",
      .holds =
          [](const Optimizer& o) {
            return std::holds_alternative<AdamOptions>(o.options);
          },
      .learning_rate =
          [](Optimizer& o) {
            return &std::get<AdamOptions>(o.options).learning_rate;
          },
      .check = CheckAdam,
      .slots_per_weight = [](const Optimizer&) { return 2; },
      .write_config = WriteAdamConfig,
      .read_config = ReadAdamConfig,
      .build = BuildAdam,
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer Adam(AdamOptions options) { return Optimizer{.options = options}; }
}  // namespace optimizers

}  // namespace graphgc
