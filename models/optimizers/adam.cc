// Adam: m and v per weight and TensorFlow's ResourceApplyAdam, whose step
// size lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) is Keras's bias correction.
// With amsgrad (which ResourceApplyAdam lacks) the update is composed as
// keras/src/optimizers/adam.py writes it, dividing by the running maximum
// of v. AdamW (adamw.cc) builds the same update.
#include "models/optimizers/adam.h"

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
  return CheckAdamOptions("Adam", Options(optimizer));
}

Json WriteAdamConfig(const Optimizer& optimizer) {
  return AdamConfig("Adam", "adam", Options(optimizer));
}

absl::StatusOr<Optimizer> ReadAdamConfig(const ConfigObject& c) {
  GG_ASSIGN_OR_RETURN(AdamOptions o, ReadAdamOptions(c));
  return optimizers::Adam(o);
}

absl::StatusOr<OptimizerUpdates> BuildAdam(const Optimizer& optimizer,
                                           const UpdateInputs& in) {
  return BuildAdamUpdates(Options(optimizer), "Adam", in);
}

// amsgrad: alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t); m and v move
// toward g and g^2; v_hat = max(v_hat, v); w -= alpha * m / (sqrt(v_hat) +
// epsilon).
absl::StatusOr<OptimizerUpdates> BuildAmsgrad(const AdamOptions& o,
                                              const std::string& s,
                                              const UpdateInputs& in) {
  Graph& g = in.graph;
  OptimizerUpdates out;
  GG_ASSIGN_OR_RETURN(
      Output b1p, StepPower(g, o.beta_1, in.local_step, s + "/beta_1_power"));
  GG_ASSIGN_OR_RETURN(
      Output b2p, StepPower(g, o.beta_2, in.local_step, s + "/beta_2_power"));
  GG_ASSIGN_OR_RETURN(Output one, ScalarConst(g, 1.f, s + "/one"));
  GG_ASSIGN_OR_RETURN(Output c1, ops::Sub(one, b1p, {.name = s + "/sub"}));
  GG_ASSIGN_OR_RETURN(Output c2, ops::Sub(one, b2p, {.name = s + "/sub_1"}));
  GG_ASSIGN_OR_RETURN(Output r2, ops::Sqrt(c2, {.name = s + "/Sqrt"}));
  GG_ASSIGN_OR_RETURN(Output lr_r2, ops::Mul(in.lr, r2, {.name = s + "/mul"}));
  GG_ASSIGN_OR_RETURN(Output alpha,
                      ops::RealDiv(lr_r2, c1, {.name = s + "/alpha"}));
  GG_ASSIGN_OR_RETURN(Output eps, ScalarConst(g, o.epsilon, s + "/epsilon"));
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = SlotBase(s, in.variables[i]);
    const Output& grad = in.grads[i];
    GG_ASSIGN_OR_RETURN(Output m_slot, ZeroSlot(in, i, base, "m"));
    GG_ASSIGN_OR_RETURN(Output v_slot, ZeroSlot(in, i, base, "v"));
    GG_ASSIGN_OR_RETURN(Output vhat_slot, ZeroSlot(in, i, base, "v_hat"));
    GG_ASSIGN_OR_RETURN(SlotUpdate m, MovingAverageSlot(m_slot, grad, o.beta_1,
                                                        in.after, base + "/m"));
    GG_ASSIGN_OR_RETURN(Output g2,
                        ops::Square(grad, {.name = base + "/Square"}));
    GG_ASSIGN_OR_RETURN(SlotUpdate v, MovingAverageSlot(v_slot, g2, o.beta_2,
                                                        in.after, base + "/v"));
    GG_ASSIGN_OR_RETURN(
        Output vhat_old,
        ops::ReadVariableOp(vhat_slot, {.name = base + "/v_hat/Read",
                                        .control_inputs = in.after}));
    GG_ASSIGN_OR_RETURN(Output vhat, ops::Maximum(vhat_old, v.value,
                                                  {.name = base + "/Maximum"}));
    GG_ASSIGN_OR_RETURN(Output set_vhat,
                        ops::AssignVariableOp(
                            vhat_slot, vhat, {.name = base + "/v_hat/Update"}));
    GG_ASSIGN_OR_RETURN(Output root, ops::Sqrt(vhat, {.name = base + "/Sqrt"}));
    GG_ASSIGN_OR_RETURN(Output denom,
                        ops::Add(root, eps, {.name = base + "/add"}));
    GG_ASSIGN_OR_RETURN(Output ma,
                        ops::Mul(m.value, alpha, {.name = base + "/mul"}));
    GG_ASSIGN_OR_RETURN(Output step,
                        ops::RealDiv(ma, denom, {.name = base + "/truediv"}));
    GG_ASSIGN_OR_RETURN(Output apply,
                        ops::AssignSubVariableOp(in.variables[i], step,
                                                 {.name = base + "/Update",
                                                  .control_inputs = in.after}));
    for (const Output& u : {m.assign, v.assign, set_vhat, apply}) {
      out.updates.push_back(u.handle());
    }
  }
  return out;
}

}  // namespace

absl::Status CheckAdamOptions(const std::string& class_name,
                              const AdamOptions& o) {
  GG_RETURN_IF_ERROR(CheckLearningRate(class_name, o.learning_rate));
  // Written so that NaN fails too.
  if (!(o.beta_1 >= 0 && o.beta_1 < 1)) {
    return BadOption(class_name + " beta_1", o.beta_1, "in [0, 1)");
  }
  if (!(o.beta_2 >= 0 && o.beta_2 < 1)) {
    return BadOption(class_name + " beta_2", o.beta_2, "in [0, 1)");
  }
  if (!std::isfinite(o.epsilon) || !(o.epsilon > 0)) {
    return BadOption(class_name + " epsilon", o.epsilon, "finite and > 0");
  }
  return absl::OkStatus();
}

Json AdamConfig(const char* class_name, const char* name,
                const AdamOptions& o) {
  return KerasObject("keras.optimizers", class_name,
                     {{"name", name},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"beta_1", FloatJson(o.beta_1)},
                      {"beta_2", FloatJson(o.beta_2)},
                      {"epsilon", FloatJson(o.epsilon)},
                      {"amsgrad", o.amsgrad}});
}

absl::StatusOr<AdamOptions> ReadAdamOptions(const ConfigObject& c) {
  AdamOptions o;
  GG_ASSIGN_OR_RETURN(o.learning_rate,
                      c.Float("learning_rate", o.learning_rate));
  GG_ASSIGN_OR_RETURN(o.beta_1, c.Float("beta_1", o.beta_1));
  GG_ASSIGN_OR_RETURN(o.beta_2, c.Float("beta_2", o.beta_2));
  GG_ASSIGN_OR_RETURN(o.epsilon, c.Float("epsilon", o.epsilon));
  GG_ASSIGN_OR_RETURN(o.amsgrad, c.Bool("amsgrad", o.amsgrad));
  return o;
}

// Under "<scope>/<class_name>": m and v per weight, ResourceApplyAdam, then
// beta_1^t and beta_2^t advanced once every weight has used them.
absl::StatusOr<OptimizerUpdates> BuildAdamUpdates(const AdamOptions& o,
                                                  const std::string& class_name,
                                                  const UpdateInputs& in) {
  Graph& g = in.graph;
  const std::string s = in.scope + "/" + class_name;
  if (o.amsgrad) return BuildAmsgrad(o, s, in);
  OptimizerUpdates out;
  const Output lr = in.lr;
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

OptimizerStateLayout AdamStateLayout(const AdamOptions& o) {
  if (o.amsgrad) return {.slot_groups = {{"m", "v"}, {"v_hat"}}};
  return {
      .slot_groups = {{"m", "v"}},
      .step_powers = {{"beta_1_power", o.beta_1}, {"beta_2_power", o.beta_2}}};
}

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
      .slots_per_weight =
          [](const Optimizer& o) { return Options(o).amsgrad ? 3 : 2; },
      .write_config = WriteAdamConfig,
      .read_config = ReadAdamConfig,
      .build = BuildAdam,
      .state_layout =
          [](const Optimizer& o) { return AdamStateLayout(Options(o)); },
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer Adam(AdamOptions options, BaseOptimizerOptions base) {
  return Optimizer{.options = options, .base = base};
}
}  // namespace optimizers

}  // namespace graphgc
