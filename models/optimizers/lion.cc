// Lion (keras/src/optimizers/lion.py): one momentum per weight;
//   w -= lr * sign(beta_1 * m + (1 - beta_1) * g);
//   m = beta_2 * m + (1 - beta_2) * g.
#include <cmath>
#include <variant>

#include "models/optimizer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const LionOptions& Options(const Optimizer& o) {
  return std::get<LionOptions>(o.options);
}

absl::Status CheckLion(const Optimizer& optimizer) {
  const LionOptions& o = Options(optimizer);
  GG_RETURN_IF_ERROR(CheckLearningRate("Lion", o.learning_rate));
  // Keras refuses beta_1 <= 0 (Lion would be SignSGD); written so that NaN
  // fails too.
  if (!(o.beta_1 > 0 && o.beta_1 <= 1)) {
    return BadOption("Lion beta_1", o.beta_1, "in (0, 1]");
  }
  if (!(o.beta_2 >= 0 && o.beta_2 <= 1)) {
    return BadOption("Lion beta_2", o.beta_2, "in [0, 1]");
  }
  return absl::OkStatus();
}

Json WriteLionConfig(const Optimizer& optimizer) {
  const LionOptions& o = Options(optimizer);
  return KerasObject("keras.optimizers", "Lion",
                     {{"name", "lion"},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"beta_1", FloatJson(o.beta_1)},
                      {"beta_2", FloatJson(o.beta_2)}});
}

absl::StatusOr<Optimizer> ReadLionConfig(const ConfigObject& c) {
  LionOptions o;
  GG_ASSIGN_OR_RETURN(o.learning_rate,
                      c.Float("learning_rate", o.learning_rate));
  GG_ASSIGN_OR_RETURN(o.beta_1, c.Float("beta_1", o.beta_1));
  GG_ASSIGN_OR_RETURN(o.beta_2, c.Float("beta_2", o.beta_2));
  return optimizers::Lion(o);
}

// beta * m + (1 - beta) * g.
absl::StatusOr<Output> Mix(Graph& g, float beta, const Output& m,
                           const Output& grad, const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output b, ScalarConst(g, beta, name + "/beta"));
  GG_ASSIGN_OR_RETURN(Output c,
                      ScalarConst(g, 1.f - beta, name + "/one_minus_beta"));
  GG_ASSIGN_OR_RETURN(Output bm, ops::Mul(m, b, {.name = name + "/mul"}));
  GG_ASSIGN_OR_RETURN(Output cg, ops::Mul(grad, c, {.name = name + "/mul_1"}));
  return ops::Add(bm, cg, {.name = name + "/add"});
}

absl::StatusOr<OptimizerUpdates> BuildLion(const Optimizer& optimizer,
                                           const UpdateInputs& in) {
  const LionOptions& o = Options(optimizer);
  Graph& g = in.graph;
  const std::string s = in.scope + "/Lion";
  OptimizerUpdates out;
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = SlotBase(s, in.variables[i]);
    const Output& grad = in.grads[i];
    GG_ASSIGN_OR_RETURN(Output m_slot, ZeroSlot(in, i, base, "momentum"));
    GG_ASSIGN_OR_RETURN(
        Output m, ops::ReadVariableOp(m_slot, {.name = base + "/momentum/Read",
                                               .control_inputs = in.after}));
    GG_ASSIGN_OR_RETURN(Output c, Mix(g, o.beta_1, m, grad, base + "/c"));
    GG_ASSIGN_OR_RETURN(Output sign, SignOf(c, base + "/Sign"));
    GG_ASSIGN_OR_RETURN(Output step,
                        ops::Mul(in.lr, sign, {.name = base + "/mul"}));
    GG_ASSIGN_OR_RETURN(Output apply,
                        ops::AssignSubVariableOp(in.variables[i], step,
                                                 {.name = base + "/Update",
                                                  .control_inputs = in.after}));
    GG_ASSIGN_OR_RETURN(Output m_new, Mix(g, o.beta_2, m, grad, base + "/m"));
    GG_ASSIGN_OR_RETURN(
        Output set_m, ops::AssignVariableOp(
                          m_slot, m_new, {.name = base + "/momentum/Update"}));
    out.updates.push_back(apply.handle());
    out.updates.push_back(set_m.handle());
  }
  return out;
}

}  // namespace

const OptimizerKind& LionKind() {
  static const OptimizerKind* kind = new OptimizerKind{
      .class_name = "Lion",
      .keras_name = "lion",
      .holds =
          [](const Optimizer& o) {
            return std::holds_alternative<LionOptions>(o.options);
          },
      .learning_rate =
          [](Optimizer& o) {
            return &std::get<LionOptions>(o.options).learning_rate;
          },
      .check = CheckLion,
      .slots_per_weight = [](const Optimizer&) { return 1; },
      .write_config = WriteLionConfig,
      .read_config = ReadLionConfig,
      .build = BuildLion,
      .state_layout =
          [](const Optimizer&) {
            return OptimizerStateLayout{.slot_groups = {{"momentum"}}};
          },
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer Lion(LionOptions options, BaseOptimizerOptions base) {
  return Optimizer{.options = options, .base = base};
}
}  // namespace optimizers

}  // namespace graphgc
