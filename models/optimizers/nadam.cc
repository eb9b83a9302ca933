// Nadam (keras/src/optimizers/nadam.py): Adam with Nesterov momentum. With
// t = iterations + 1, u_t = beta_1 * (1 - 0.5 * 0.96^t) and u_{t+1} likewise,
// the scalar u_product *= u_t once per step, then per weight:
//   m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2);
//   m_hat = u_{t+1} * m / (1 - u_product * u_{t+1})
//           + (1 - u_t) * g / (1 - u_product);
//   v_hat = v / (1 - beta_2^t);  w -= lr * m_hat / (sqrt(v_hat) + epsilon).
#include <cmath>
#include <variant>

#include "models/optimizer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

constexpr float kDecay = 0.96f;

const NadamOptions& Options(const Optimizer& o) {
  return std::get<NadamOptions>(o.options);
}

absl::Status CheckNadam(const Optimizer& optimizer) {
  const NadamOptions& o = Options(optimizer);
  GG_RETURN_IF_ERROR(CheckLearningRate("Nadam", o.learning_rate));
  // Written so that NaN fails too.
  if (!(o.beta_1 >= 0 && o.beta_1 < 1)) {
    return BadOption("Nadam beta_1", o.beta_1, "in [0, 1)");
  }
  if (!(o.beta_2 >= 0 && o.beta_2 < 1)) {
    return BadOption("Nadam beta_2", o.beta_2, "in [0, 1)");
  }
  if (!std::isfinite(o.epsilon) || !(o.epsilon > 0)) {
    return BadOption("Nadam epsilon", o.epsilon, "finite and > 0");
  }
  return absl::OkStatus();
}

Json WriteNadamConfig(const Optimizer& optimizer) {
  const NadamOptions& o = Options(optimizer);
  return KerasObject("keras.optimizers", "Nadam",
                     {{"name", "nadam"},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"beta_1", FloatJson(o.beta_1)},
                      {"beta_2", FloatJson(o.beta_2)},
                      {"epsilon", FloatJson(o.epsilon)}});
}

absl::StatusOr<Optimizer> ReadNadamConfig(const ConfigObject& c) {
  NadamOptions o;
  GG_ASSIGN_OR_RETURN(o.learning_rate,
                      c.Float("learning_rate", o.learning_rate));
  GG_ASSIGN_OR_RETURN(o.beta_1, c.Float("beta_1", o.beta_1));
  GG_ASSIGN_OR_RETURN(o.beta_2, c.Float("beta_2", o.beta_2));
  GG_ASSIGN_OR_RETURN(o.epsilon, c.Float("epsilon", o.epsilon));
  return optimizers::Nadam(o);
}

// beta_1 * (1 - 0.5 * decay_power).
absl::StatusOr<Output> Momentum(Graph& g, float beta_1,
                                const Output& decay_power,
                                const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output half, ScalarConst(g, 0.5f, name + "/half"));
  GG_ASSIGN_OR_RETURN(Output one, ScalarConst(g, 1.f, name + "/one"));
  GG_ASSIGN_OR_RETURN(Output b1, ScalarConst(g, beta_1, name + "/beta_1"));
  GG_ASSIGN_OR_RETURN(Output h,
                      ops::Mul(half, decay_power, {.name = name + "/mul"}));
  GG_ASSIGN_OR_RETURN(Output r, ops::Sub(one, h, {.name = name + "/sub"}));
  return ops::Mul(b1, r, {.name = name});
}

absl::StatusOr<OptimizerUpdates> BuildNadam(const Optimizer& optimizer,
                                            const UpdateInputs& in) {
  const NadamOptions& o = Options(optimizer);
  Graph& g = in.graph;
  const std::string s = in.scope + "/Nadam";
  OptimizerUpdates out;
  GG_ASSIGN_OR_RETURN(Output one, ScalarConst(g, 1.f, s + "/one"));
  GG_ASSIGN_OR_RETURN(Output d_t,
                      StepPower(g, kDecay, in.local_step, s + "/decay_power"));
  GG_ASSIGN_OR_RETURN(Output decay, ScalarConst(g, kDecay, s + "/decay"));
  GG_ASSIGN_OR_RETURN(Output d_t1,
                      ops::Mul(d_t, decay, {.name = s + "/decay_power_1"}));
  GG_ASSIGN_OR_RETURN(Output u_t, Momentum(g, o.beta_1, d_t, s + "/u_t"));
  GG_ASSIGN_OR_RETURN(Output u_t1, Momentum(g, o.beta_1, d_t1, s + "/u_t_1"));
  GG_ASSIGN_OR_RETURN(
      Output u_product,
      SlotVariable(g, s + "/u_product", Tensor::Scalar<float>(1), in.session));
  GG_ASSIGN_OR_RETURN(
      Output up_old,
      ops::ReadVariableOp(u_product, {.name = s + "/u_product/Read",
                                      .control_inputs = in.after}));
  GG_ASSIGN_OR_RETURN(Output up_t,
                      ops::Mul(up_old, u_t, {.name = s + "/u_product_t"}));
  GG_ASSIGN_OR_RETURN(Output up_t1,
                      ops::Mul(up_t, u_t1, {.name = s + "/u_product_t_1"}));
  GG_ASSIGN_OR_RETURN(
      Output b2p, StepPower(g, o.beta_2, in.local_step, s + "/beta_2_power"));
  // Per-step scalars of m_hat and v_hat.
  GG_ASSIGN_OR_RETURN(Output c_m, ops::Sub(one, up_t1, {.name = s + "/sub"}));
  GG_ASSIGN_OR_RETURN(Output c_g, ops::Sub(one, up_t, {.name = s + "/sub_1"}));
  GG_ASSIGN_OR_RETURN(Output k_g, ops::Sub(one, u_t, {.name = s + "/sub_2"}));
  GG_ASSIGN_OR_RETURN(Output c_v, ops::Sub(one, b2p, {.name = s + "/sub_3"}));
  GG_ASSIGN_OR_RETURN(Output eps, ScalarConst(g, o.epsilon, s + "/epsilon"));
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = SlotBase(s, in.variables[i]);
    const Output& grad = in.grads[i];
    GG_ASSIGN_OR_RETURN(Output m_slot, ZeroSlot(in, i, base, "momentum"));
    GG_ASSIGN_OR_RETURN(Output v_slot, ZeroSlot(in, i, base, "velocity"));
    GG_ASSIGN_OR_RETURN(SlotUpdate m,
                        MovingAverageSlot(m_slot, grad, o.beta_1, in.after,
                                          base + "/momentum"));
    GG_ASSIGN_OR_RETURN(Output g2,
                        ops::Square(grad, {.name = base + "/Square"}));
    GG_ASSIGN_OR_RETURN(
        SlotUpdate v,
        MovingAverageSlot(v_slot, g2, o.beta_2, in.after, base + "/velocity"));
    GG_ASSIGN_OR_RETURN(Output um,
                        ops::Mul(u_t1, m.value, {.name = base + "/mul"}));
    GG_ASSIGN_OR_RETURN(Output a,
                        ops::RealDiv(um, c_m, {.name = base + "/truediv"}));
    GG_ASSIGN_OR_RETURN(Output kg,
                        ops::Mul(k_g, grad, {.name = base + "/mul_1"}));
    GG_ASSIGN_OR_RETURN(Output b,
                        ops::RealDiv(kg, c_g, {.name = base + "/truediv_1"}));
    GG_ASSIGN_OR_RETURN(Output m_hat,
                        ops::Add(a, b, {.name = base + "/m_hat"}));
    GG_ASSIGN_OR_RETURN(Output v_hat,
                        ops::RealDiv(v.value, c_v, {.name = base + "/v_hat"}));
    GG_ASSIGN_OR_RETURN(Output root,
                        ops::Sqrt(v_hat, {.name = base + "/Sqrt"}));
    GG_ASSIGN_OR_RETURN(Output denom,
                        ops::Add(root, eps, {.name = base + "/add"}));
    GG_ASSIGN_OR_RETURN(Output ml,
                        ops::Mul(m_hat, in.lr, {.name = base + "/mul_2"}));
    GG_ASSIGN_OR_RETURN(Output step,
                        ops::RealDiv(ml, denom, {.name = base + "/truediv_2"}));
    GG_ASSIGN_OR_RETURN(Output apply,
                        ops::AssignSubVariableOp(in.variables[i], step,
                                                 {.name = base + "/Update",
                                                  .control_inputs = in.after}));
    for (const Output& n : {m.assign, v.assign, apply}) {
      out.updates.push_back(n.handle());
    }
  }
  // u_product advances once every weight has used this step's value.
  std::vector<NodeHandle> applies = out.updates;
  GG_ASSIGN_OR_RETURN(Output set_up,
                      ops::AssignVariableOp(u_product, up_t,
                                            {.name = s + "/u_product/Update",
                                             .control_inputs = applies}));
  out.updates.push_back(set_up.handle());
  return out;
}

}  // namespace

const OptimizerKind& NadamKind() {
  static const OptimizerKind* kind = new OptimizerKind{
      .class_name = "Nadam",
      .keras_name = "nadam",
      .holds =
          [](const Optimizer& o) {
            return std::holds_alternative<NadamOptions>(o.options);
          },
      .learning_rate =
          [](Optimizer& o) {
            return &std::get<NadamOptions>(o.options).learning_rate;
          },
      .check = CheckNadam,
      .slots_per_weight = [](const Optimizer&) { return 2; },
      .write_config = WriteNadamConfig,
      .read_config = ReadNadamConfig,
      .build = BuildNadam,
      .state_layout =
          [](const Optimizer&) {
            // keras/src/optimizers/nadam.py tracks u_product after the slots.
            return OptimizerStateLayout{
                .slot_groups = {{"momentum", "velocity"}},
                .scalars = {"u_product"}};
          },
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer Nadam(NadamOptions options, BaseOptimizerOptions base) {
  return Optimizer{.options = options, .base = base};
}
}  // namespace optimizers

}  // namespace graphgc
