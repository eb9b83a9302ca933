// Adamax (keras/src/optimizers/adamax.py): m and the infinity norm u per
// weight:
//   m += (g - m) * (1 - beta_1);  u = max(beta_2 * u, |g|);
//   w -= lr * m / ((1 - beta_1^t) * (u + epsilon)),  t = iterations + 1.
#include <cmath>
#include <variant>

#include "models/optimizer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const AdamaxOptions& Options(const Optimizer& o) {
  return std::get<AdamaxOptions>(o.options);
}

absl::Status CheckAdamax(const Optimizer& optimizer) {
  const AdamaxOptions& o = Options(optimizer);
  GG_RETURN_IF_ERROR(CheckLearningRate("Adamax", o.learning_rate));
  // Written so that NaN fails too.
  if (!(o.beta_1 >= 0 && o.beta_1 < 1)) {
    return BadOption("Adamax beta_1", o.beta_1, "in [0, 1)");
  }
  if (!(o.beta_2 >= 0 && o.beta_2 <= 1)) {
    return BadOption("Adamax beta_2", o.beta_2, "in [0, 1]");
  }
  if (!std::isfinite(o.epsilon) || !(o.epsilon > 0)) {
    return BadOption("Adamax epsilon", o.epsilon, "finite and > 0");
  }
  return absl::OkStatus();
}

Json WriteAdamaxConfig(const Optimizer& optimizer) {
  const AdamaxOptions& o = Options(optimizer);
  return KerasObject("keras.optimizers", "Adamax",
                     {{"name", "adamax"},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"beta_1", FloatJson(o.beta_1)},
                      {"beta_2", FloatJson(o.beta_2)},
                      {"epsilon", FloatJson(o.epsilon)}});
}

absl::StatusOr<Optimizer> ReadAdamaxConfig(const ConfigObject& c) {
  AdamaxOptions o;
  GG_ASSIGN_OR_RETURN(o.learning_rate,
                      c.Float("learning_rate", o.learning_rate));
  GG_ASSIGN_OR_RETURN(o.beta_1, c.Float("beta_1", o.beta_1));
  GG_ASSIGN_OR_RETURN(o.beta_2, c.Float("beta_2", o.beta_2));
  GG_ASSIGN_OR_RETURN(o.epsilon, c.Float("epsilon", o.epsilon));
  return optimizers::Adamax(o);
}

absl::StatusOr<OptimizerUpdates> BuildAdamax(const Optimizer& optimizer,
                                             const UpdateInputs& in) {
  const AdamaxOptions& o = Options(optimizer);
  Graph& g = in.graph;
  const std::string s = in.scope + "/Adamax";
  OptimizerUpdates out;
  GG_ASSIGN_OR_RETURN(
      Output b1p, StepPower(g, o.beta_1, in.local_step, s + "/beta_1_power"));
  GG_ASSIGN_OR_RETURN(Output one, ScalarConst(g, 1.f, s + "/one"));
  GG_ASSIGN_OR_RETURN(Output c1, ops::Sub(one, b1p, {.name = s + "/sub"}));
  GG_ASSIGN_OR_RETURN(Output b2, ScalarConst(g, o.beta_2, s + "/beta_2"));
  GG_ASSIGN_OR_RETURN(Output eps, ScalarConst(g, o.epsilon, s + "/epsilon"));
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = SlotBase(s, in.variables[i]);
    const Output& grad = in.grads[i];
    GG_ASSIGN_OR_RETURN(Output m_slot, ZeroSlot(in, i, base, "m"));
    GG_ASSIGN_OR_RETURN(Output u_slot, ZeroSlot(in, i, base, "u"));
    GG_ASSIGN_OR_RETURN(SlotUpdate m, MovingAverageSlot(m_slot, grad, o.beta_1,
                                                        in.after, base + "/m"));
    GG_ASSIGN_OR_RETURN(
        Output u_old,
        ops::ReadVariableOp(
            u_slot, {.name = base + "/u/Read", .control_inputs = in.after}));
    GG_ASSIGN_OR_RETURN(Output bu,
                        ops::Mul(b2, u_old, {.name = base + "/mul"}));
    GG_ASSIGN_OR_RETURN(Output abs_g, AbsOf(grad, base + "/Abs"));
    GG_ASSIGN_OR_RETURN(Output u,
                        ops::Maximum(bu, abs_g, {.name = base + "/Maximum"}));
    GG_ASSIGN_OR_RETURN(
        Output set_u,
        ops::AssignVariableOp(u_slot, u, {.name = base + "/u/Update"}));
    GG_ASSIGN_OR_RETURN(Output ue, ops::Add(u, eps, {.name = base + "/add"}));
    GG_ASSIGN_OR_RETURN(Output denom,
                        ops::Mul(c1, ue, {.name = base + "/mul_1"}));
    GG_ASSIGN_OR_RETURN(Output lm,
                        ops::Mul(in.lr, m.value, {.name = base + "/mul_2"}));
    GG_ASSIGN_OR_RETURN(Output step,
                        ops::RealDiv(lm, denom, {.name = base + "/truediv"}));
    GG_ASSIGN_OR_RETURN(Output apply,
                        ops::AssignSubVariableOp(in.variables[i], step,
                                                 {.name = base + "/Update",
                                                  .control_inputs = in.after}));
    for (const Output& n : {m.assign, set_u, apply}) {
      out.updates.push_back(n.handle());
    }
  }
  return out;
}

}  // namespace

const OptimizerKind& AdamaxKind() {
  static const OptimizerKind* kind = new OptimizerKind{
      .class_name = "Adamax",
      .keras_name = "adamax",
      .holds =
          [](const Optimizer& o) {
            return std::holds_alternative<AdamaxOptions>(o.options);
          },
      .learning_rate =
          [](Optimizer& o) {
            return &std::get<AdamaxOptions>(o.options).learning_rate;
          },
      .check = CheckAdamax,
      .slots_per_weight = [](const Optimizer&) { return 2; },
      .write_config = WriteAdamaxConfig,
      .read_config = ReadAdamaxConfig,
      .build = BuildAdamax,
      .state_layout =
          [](const Optimizer&) {
            return OptimizerStateLayout{.slot_groups = {{"m", "u"}}};
          },
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer Adamax(AdamaxOptions options, BaseOptimizerOptions base) {
  return Optimizer{.options = options, .base = base};
}
}  // namespace optimizers

}  // namespace graphgc
