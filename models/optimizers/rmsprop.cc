// RMSprop with Keras 3's update (keras/src/optimizers/rmsprop.py):
//   velocity = rho * velocity + (1 - rho) * g^2
//   centered: average_grad = rho * average_grad + (1 - rho) * g,
//             denominator = velocity - average_grad^2 + epsilon
//   else:     denominator = velocity + epsilon
//   increment = lr * g / sqrt(denominator)
//   momentum > 0: m = momentum * m + increment; w -= m;  else w -= increment.
// TensorFlow's ResourceApplyRMSProp / ResourceApplyCenteredRMSProp compute
// the same (epsilon inside the square root) but graphgc has no kernel for
// them, so the update is composed from elementwise ops and the variable
// ops; the slots are created as Keras creates them (momentum only when
// momentum > 0, average_gradient only when centered).
#include <cmath>
#include <variant>

#include "models/optimizer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const RMSpropOptions& Options(const Optimizer& o) {
  return std::get<RMSpropOptions>(o.options);
}

absl::Status CheckRMSprop(const Optimizer& optimizer) {
  const RMSpropOptions& o = Options(optimizer);
  GG_RETURN_IF_ERROR(CheckLearningRate("RMSprop", o.learning_rate));
  // Written so that NaN fails too.
  if (!(o.rho >= 0 && o.rho <= 1)) {
    return BadOption("RMSprop rho", o.rho, "in [0, 1]");
  }
  if (!(o.momentum >= 0 && o.momentum <= 1)) {
    return BadOption("RMSprop momentum", o.momentum, "in [0, 1]");
  }
  if (!std::isfinite(o.epsilon) || !(o.epsilon > 0)) {
    return BadOption("RMSprop epsilon", o.epsilon, "finite and > 0");
  }
  return absl::OkStatus();
}

Json WriteRMSpropConfig(const Optimizer& optimizer) {
  const RMSpropOptions& o = Options(optimizer);
  return KerasObject("keras.optimizers", "RMSprop",
                     {{"name", "rmsprop"},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"rho", FloatJson(o.rho)},
                      {"momentum", FloatJson(o.momentum)},
                      {"epsilon", FloatJson(o.epsilon)},
                      {"centered", o.centered}});
}

absl::StatusOr<Optimizer> ReadRMSpropConfig(const ConfigObject& c) {
  RMSpropOptions o;
  GG_ASSIGN_OR_RETURN(o.learning_rate,
                      c.Float("learning_rate", o.learning_rate));
  GG_ASSIGN_OR_RETURN(o.rho, c.Float("rho", o.rho));
  GG_ASSIGN_OR_RETURN(o.momentum, c.Float("momentum", o.momentum));
  GG_ASSIGN_OR_RETURN(o.epsilon, c.Float("epsilon", o.epsilon));
  GG_ASSIGN_OR_RETURN(o.centered, c.Bool("centered", o.centered));
  return optimizers::RMSprop(o);
}

int RMSpropSlots(const Optimizer& optimizer) {
  const RMSpropOptions& o = Options(optimizer);
  return 1 + (o.momentum > 0 ? 1 : 0) + (o.centered ? 1 : 0);
}

// rho * slot + (1 - rho) * x, assigned to `slot`; returns the new value.
struct Average {
  Output value;
  Output assign;
};
absl::StatusOr<Average> MovingAverage(const Output& slot, const Output& x,
                                      const Output& rho,
                                      const Output& one_minus_rho,
                                      const std::vector<NodeHandle>& after,
                                      const std::string& name) {
  GG_ASSIGN_OR_RETURN(
      Output old, ops::ReadVariableOp(
                      slot, {.name = name + "/Read", .control_inputs = after}));
  GG_ASSIGN_OR_RETURN(Output a, ops::Mul(rho, old, {.name = name + "/mul"}));
  GG_ASSIGN_OR_RETURN(Output b,
                      ops::Mul(one_minus_rho, x, {.name = name + "/mul_1"}));
  Average out;
  GG_ASSIGN_OR_RETURN(out.value, ops::Add(a, b, {.name = name + "/add"}));
  GG_ASSIGN_OR_RETURN(
      out.assign,
      ops::AssignVariableOp(slot, out.value, {.name = name + "/Update"}));
  return out;
}

// Under "<scope>/RMSprop": velocity (and momentum, average_gradient) per
// weight.
absl::StatusOr<OptimizerUpdates> BuildRMSprop(const Optimizer& optimizer,
                                              const UpdateInputs& in) {
  const RMSpropOptions& o = Options(optimizer);
  Graph& g = in.graph;
  const std::string s = in.scope + "/RMSprop";
  OptimizerUpdates out;
  const Output lr = in.lr;
  GG_ASSIGN_OR_RETURN(Output rho, ops::Const(g, o.rho, {.name = s + "/rho"}));
  GG_ASSIGN_OR_RETURN(
      Output one_minus_rho,
      ops::Const(g, 1.f - o.rho, {.name = s + "/one_minus_rho"}));
  GG_ASSIGN_OR_RETURN(Output eps,
                      ops::Const(g, o.epsilon, {.name = s + "/epsilon"}));
  GG_ASSIGN_OR_RETURN(Output mom,
                      ops::Const(g, o.momentum, {.name = s + "/momentum"}));
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = SlotBase(s, in.variables[i]);
    const Output& grad = in.grads[i];
    GG_ASSIGN_OR_RETURN(Output velocity, ZeroSlot(in, i, base, "velocity"));
    GG_ASSIGN_OR_RETURN(Output g2,
                        ops::Square(grad, {.name = base + "/Square"}));
    GG_ASSIGN_OR_RETURN(
        Average v, MovingAverage(velocity, g2, rho, one_minus_rho, in.after,
                                 base + "/velocity"));
    out.updates.push_back(v.assign.handle());
    Output denominator = v.value;
    if (o.centered) {
      GG_ASSIGN_OR_RETURN(Output average_grad,
                          ZeroSlot(in, i, base, "average_gradient"));
      GG_ASSIGN_OR_RETURN(Average ag,
                          MovingAverage(average_grad, grad, rho, one_minus_rho,
                                        in.after, base + "/average_gradient"));
      out.updates.push_back(ag.assign.handle());
      GG_ASSIGN_OR_RETURN(Output ag2,
                          ops::Square(ag.value, {.name = base + "/Square_1"}));
      GG_ASSIGN_OR_RETURN(denominator,
                          ops::Sub(v.value, ag2, {.name = base + "/sub"}));
    }
    GG_ASSIGN_OR_RETURN(denominator,
                        ops::Add(denominator, eps, {.name = base + "/add"}));
    GG_ASSIGN_OR_RETURN(Output root,
                        ops::Sqrt(denominator, {.name = base + "/Sqrt"}));
    GG_ASSIGN_OR_RETURN(Output lg, ops::Mul(lr, grad, {.name = base + "/mul"}));
    GG_ASSIGN_OR_RETURN(Output step,
                        ops::RealDiv(lg, root, {.name = base + "/truediv"}));
    if (o.momentum > 0) {
      GG_ASSIGN_OR_RETURN(Output momentum, ZeroSlot(in, i, base, "momentum"));
      GG_ASSIGN_OR_RETURN(
          Output m_old,
          ops::ReadVariableOp(momentum, {.name = base + "/momentum/Read",
                                         .control_inputs = in.after}));
      GG_ASSIGN_OR_RETURN(Output mm,
                          ops::Mul(mom, m_old, {.name = base + "/mul_1"}));
      GG_ASSIGN_OR_RETURN(step, ops::Add(mm, step, {.name = base + "/add_1"}));
      GG_ASSIGN_OR_RETURN(
          Output set_m,
          ops::AssignVariableOp(momentum, step,
                                {.name = base + "/momentum/Update"}));
      out.updates.push_back(set_m.handle());
    }
    GG_ASSIGN_OR_RETURN(Output apply,
                        ops::AssignSubVariableOp(in.variables[i], step,
                                                 {.name = base + "/Update",
                                                  .control_inputs = in.after}));
    out.updates.push_back(apply.handle());
  }
  return out;
}

}  // namespace

const OptimizerKind& RMSpropKind() {
  static const OptimizerKind* kind = new OptimizerKind{
      .class_name = "RMSprop",
      .keras_name = "rmsprop",
      .holds =
          [](const Optimizer& o) {
            return std::holds_alternative<RMSpropOptions>(o.options);
          },
      .learning_rate =
          [](Optimizer& o) {
            return &std::get<RMSpropOptions>(o.options).learning_rate;
          },
      .check = CheckRMSprop,
      .slots_per_weight = RMSpropSlots,
      .write_config = WriteRMSpropConfig,
      .read_config = ReadRMSpropConfig,
      .build = BuildRMSprop,
      .state_layout =
          [](const Optimizer& o) {
            // keras/src/optimizers/rmsprop.py: velocities, momentums
            // (momentum > 0), average_gradients (centered), each a group.
            OptimizerStateLayout layout{.slot_groups = {{"velocity"}}};
            if (Options(o).momentum > 0) {
              layout.slot_groups.push_back({"momentum"});
            }
            if (Options(o).centered) {
              layout.slot_groups.push_back({"average_gradient"});
            }
            return layout;
          },
  };
  return *kind;
}

}  // namespace models_internal

namespace optimizers {
Optimizer RMSprop(RMSpropOptions options, BaseOptimizerOptions base) {
  return Optimizer{.options = options, .base = base};
}
}  // namespace optimizers

}  // namespace graphgc
