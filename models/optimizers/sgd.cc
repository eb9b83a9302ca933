// SGD: plain (ResourceApplyGradientDescent), with momentum (a velocity per
// weight) and Nesterov's look-ahead step.
#include <variant>

#include "models/optimizer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const SGDOptions& Options(const Optimizer& o) {
  return std::get<SGDOptions>(o.options);
}

absl::Status CheckSGD(const Optimizer& optimizer) {
  const SGDOptions& o = Options(optimizer);
  GG_RETURN_IF_ERROR(CheckLearningRate("SGD", o.learning_rate));
  // Written so that NaN fails too.
  if (!(o.momentum >= 0 && o.momentum <= 1)) {
    return BadOption("SGD momentum", o.momentum, "in [0, 1]");
  }
  return absl::OkStatus();
}

Json WriteSGDConfig(const Optimizer& optimizer) {
  const SGDOptions& o = Options(optimizer);
  return KerasObject("keras.optimizers", "SGD",
                     {{"name", "SGD"},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"momentum", FloatJson(o.momentum)},
                      {"nesterov", o.nesterov}});
}

absl::StatusOr<Optimizer> ReadSGDConfig(const ConfigObject& c) {
  SGDOptions o;
  GG_ASSIGN_OR_RETURN(o.learning_rate,
                      c.Float("learning_rate", o.learning_rate));
  GG_ASSIGN_OR_RETURN(o.momentum, c.Float("momentum", o.momentum));
  GG_ASSIGN_OR_RETURN(o.nesterov, c.Bool("nesterov", o.nesterov));
  return optimizers::SGD(o);
}

// Under "<scope>/SGD": ResourceApplyGradientDescent without momentum; with
// it, velocity = momentum * velocity - lr * g and w += velocity (Nesterov:
// w += momentum * velocity - lr * g).
absl::StatusOr<OptimizerUpdates> BuildSGD(const Optimizer& optimizer,
                                          const UpdateInputs& in) {
  const SGDOptions& o = Options(optimizer);
  Graph& g = in.graph;
  const std::string s = in.scope + "/SGD";
  OptimizerUpdates out;
  const Output lr = in.lr;
  if (o.momentum == 0.f && !o.nesterov) {
    for (size_t i = 0; i < in.variables.size(); ++i) {
      GG_ASSIGN_OR_RETURN(Output apply,
                          ops::ResourceApplyGradientDescent(
                              in.variables[i], lr, in.grads[i],
                              {.name = SlotBase(s, in.variables[i]) +
                                       "/ResourceApplyGradientDescent",
                               .control_inputs = in.after}));
      out.updates.push_back(apply.handle());
    }
    return out;
  }
  GG_ASSIGN_OR_RETURN(Output mom,
                      ops::Const(g, o.momentum, {.name = s + "/momentum"}));
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = SlotBase(s, in.variables[i]);
    GG_ASSIGN_OR_RETURN(Output velocity, ZeroSlot(in, i, base, "momentum"));
    GG_ASSIGN_OR_RETURN(
        Output vel,
        ops::ReadVariableOp(velocity, {.name = base + "/momentum/Read",
                                       .control_inputs = in.after}));
    GG_ASSIGN_OR_RETURN(Output mv, ops::Mul(mom, vel, {.name = base + "/mul"}));
    GG_ASSIGN_OR_RETURN(Output lg,
                        ops::Mul(lr, in.grads[i], {.name = base + "/mul_1"}));
    GG_ASSIGN_OR_RETURN(Output v_new,
                        ops::Sub(mv, lg, {.name = base + "/sub"}));
    GG_ASSIGN_OR_RETURN(Output set_v, ops::AssignVariableOp(
                                          velocity, v_new,
                                          {.name = base + "/momentum/Update"}));
    Output step = v_new;
    if (o.nesterov) {
      GG_ASSIGN_OR_RETURN(Output mv_new,
                          ops::Mul(mom, v_new, {.name = base + "/mul_2"}));
      GG_ASSIGN_OR_RETURN(step,
                          ops::Sub(mv_new, lg, {.name = base + "/sub_1"}));
    }
    GG_ASSIGN_OR_RETURN(Output apply,
                        ops::AssignAddVariableOp(in.variables[i], step,
                                                 {.name = base + "/Update",
                                                  .control_inputs = in.after}));
    out.updates.push_back(set_v.handle());
    out.updates.push_back(apply.handle());
  }
  return out;
}

}  // namespace

const OptimizerKind& SGDKind() {
  static const OptimizerKind* kind = new OptimizerKind{
      .class_name = "SGD",
      .keras_name = "sgd",
      .holds =
          [](const Optimizer& o) {
            return std::holds_alternative<SGDOptions>(o.options);
          },
      .learning_rate =
          [](Optimizer& o) {
            return &std::get<SGDOptions>(o.options).learning_rate;
          },
      .check = CheckSGD,
      .slots_per_weight = [](const Optimizer&) { return 1; },
      .write_config = WriteSGDConfig,
      .read_config = ReadSGDConfig,
      .build = BuildSGD,
      .state_layout =
          [](const Optimizer& o) {
            // keras/src/optimizers/sgd.py: momentums only when momentum != 0.
            return Options(o).momentum != 0.f
                       ? OptimizerStateLayout{.slot_groups = {{"momentum"}}}
                       : OptimizerStateLayout{};
          },
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer SGD(SGDOptions options, BaseOptimizerOptions base) {
  return Optimizer{.options = options, .base = base};
}
}  // namespace optimizers

}  // namespace graphgc
