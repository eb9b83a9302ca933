// Adadelta (keras/src/optimizers/adadelta.py), with rms(x) = sqrt(x +
// epsilon):
//   accumulated_grad = rho * accumulated_grad + (1 - rho) * g^2;
//   delta = -rms(accumulated_delta_var) * g / rms(accumulated_grad);
//   accumulated_delta_var = rho * accumulated_delta_var + (1 - rho) * delta^2;
//   w += lr * delta.
#include <cmath>
#include <variant>

#include "models/optimizer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const AdadeltaOptions& Options(const Optimizer& o) {
  return std::get<AdadeltaOptions>(o.options);
}

absl::Status CheckAdadelta(const Optimizer& optimizer) {
  const AdadeltaOptions& o = Options(optimizer);
  GG_RETURN_IF_ERROR(CheckLearningRate("Adadelta", o.learning_rate));
  // Written so that NaN fails too.
  if (!(o.rho >= 0 && o.rho <= 1)) {
    return BadOption("Adadelta rho", o.rho, "in [0, 1]");
  }
  if (!std::isfinite(o.epsilon) || !(o.epsilon > 0)) {
    return BadOption("Adadelta epsilon", o.epsilon, "finite and > 0");
  }
  return absl::OkStatus();
}

Json WriteAdadeltaConfig(const Optimizer& optimizer) {
  const AdadeltaOptions& o = Options(optimizer);
  return KerasObject("keras.optimizers", "Adadelta",
                     {{"name", "adadelta"},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"rho", FloatJson(o.rho)},
                      {"epsilon", FloatJson(o.epsilon)}});
}

absl::StatusOr<Optimizer> ReadAdadeltaConfig(const ConfigObject& c) {
  AdadeltaOptions o;
  GG_ASSIGN_OR_RETURN(o.learning_rate,
                      c.Float("learning_rate", o.learning_rate));
  GG_ASSIGN_OR_RETURN(o.rho, c.Float("rho", o.rho));
  GG_ASSIGN_OR_RETURN(o.epsilon, c.Float("epsilon", o.epsilon));
  return optimizers::Adadelta(o);
}

// rho * old + (1 - rho) * x.
absl::StatusOr<Output> Average(const Output& rho, const Output& one_minus_rho,
                               const Output& old, const Output& x,
                               const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output a, ops::Mul(rho, old, {.name = name + "/mul"}));
  GG_ASSIGN_OR_RETURN(Output b,
                      ops::Mul(one_minus_rho, x, {.name = name + "/mul_1"}));
  return ops::Add(a, b, {.name = name + "/add"});
}

absl::StatusOr<Output> Rms(const Output& x, const Output& eps,
                           const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output sum, ops::Add(x, eps, {.name = name + "/add"}));
  return ops::Sqrt(sum, {.name = name + "/Sqrt"});
}

absl::StatusOr<OptimizerUpdates> BuildAdadelta(const Optimizer& optimizer,
                                               const UpdateInputs& in) {
  const AdadeltaOptions& o = Options(optimizer);
  Graph& g = in.graph;
  const std::string s = in.scope + "/Adadelta";
  OptimizerUpdates out;
  GG_ASSIGN_OR_RETURN(Output rho, ScalarConst(g, o.rho, s + "/rho"));
  GG_ASSIGN_OR_RETURN(Output one_minus_rho,
                      ScalarConst(g, 1.f - o.rho, s + "/one_minus_rho"));
  GG_ASSIGN_OR_RETURN(Output eps, ScalarConst(g, o.epsilon, s + "/epsilon"));
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = SlotBase(s, in.variables[i]);
    const Output& grad = in.grads[i];
    GG_ASSIGN_OR_RETURN(Output ag_slot,
                        ZeroSlot(in, i, base, "accumulated_grad"));
    GG_ASSIGN_OR_RETURN(Output ad_slot,
                        ZeroSlot(in, i, base, "accumulated_delta_var"));
    GG_ASSIGN_OR_RETURN(
        Output ag_old,
        ops::ReadVariableOp(ag_slot, {.name = base + "/accumulated_grad/Read",
                                      .control_inputs = in.after}));
    GG_ASSIGN_OR_RETURN(
        Output ad_old,
        ops::ReadVariableOp(ad_slot,
                            {.name = base + "/accumulated_delta_var/Read",
                             .control_inputs = in.after}));
    GG_ASSIGN_OR_RETURN(Output g2,
                        ops::Square(grad, {.name = base + "/Square"}));
    GG_ASSIGN_OR_RETURN(Output ag, Average(rho, one_minus_rho, ag_old, g2,
                                           base + "/accumulated_grad"));
    GG_ASSIGN_OR_RETURN(
        Output set_ag,
        ops::AssignVariableOp(ag_slot, ag,
                              {.name = base + "/accumulated_grad/Update"}));
    GG_ASSIGN_OR_RETURN(Output rms_d, Rms(ad_old, eps, base + "/rms"));
    GG_ASSIGN_OR_RETURN(Output rms_g, Rms(ag, eps, base + "/rms_1"));
    GG_ASSIGN_OR_RETURN(Output rg,
                        ops::Mul(rms_d, grad, {.name = base + "/mul"}));
    GG_ASSIGN_OR_RETURN(Output q,
                        ops::RealDiv(rg, rms_g, {.name = base + "/truediv"}));
    GG_ASSIGN_OR_RETURN(Output delta, ops::Neg(q, {.name = base + "/delta"}));
    GG_ASSIGN_OR_RETURN(Output d2,
                        ops::Square(delta, {.name = base + "/Square_1"}));
    GG_ASSIGN_OR_RETURN(Output ad, Average(rho, one_minus_rho, ad_old, d2,
                                           base + "/accumulated_delta_var"));
    GG_ASSIGN_OR_RETURN(
        Output set_ad,
        ops::AssignVariableOp(
            ad_slot, ad, {.name = base + "/accumulated_delta_var/Update"}));
    GG_ASSIGN_OR_RETURN(Output step,
                        ops::Mul(in.lr, delta, {.name = base + "/mul_1"}));
    GG_ASSIGN_OR_RETURN(Output apply,
                        ops::AssignAddVariableOp(in.variables[i], step,
                                                 {.name = base + "/Update",
                                                  .control_inputs = in.after}));
    for (const Output& n : {set_ag, set_ad, apply}) {
      out.updates.push_back(n.handle());
    }
  }
  return out;
}

}  // namespace

const OptimizerKind& AdadeltaKind() {
  static const OptimizerKind* kind = new OptimizerKind{
      .class_name = "Adadelta",
      .keras_name = "adadelta",
      .holds =
          [](const Optimizer& o) {
            return std::holds_alternative<AdadeltaOptions>(o.options);
          },
      .learning_rate =
          [](Optimizer& o) {
            return &std::get<AdadeltaOptions>(o.options).learning_rate;
          },
      .check = CheckAdadelta,
      .slots_per_weight = [](const Optimizer&) { return 2; },
      .write_config = WriteAdadeltaConfig,
      .read_config = ReadAdadeltaConfig,
      .build = BuildAdadelta,
      .state_layout =
          [](const Optimizer&) {
            return OptimizerStateLayout{
                .slot_groups = {{"accumulated_grad", "accumulated_delta_var"}}};
          },
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer Adadelta(AdadeltaOptions options, BaseOptimizerOptions base) {
  return Optimizer{.options = options, .base = base};
}
}  // namespace optimizers

}  // namespace graphgc
