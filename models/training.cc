#include "models/training.h"

#include <unistd.h>

#include <cmath>
#include <variant>

#include "absl/strings/str_cat.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "ops/ops.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {

std::string Optimizer::name() const {
  if (std::holds_alternative<SGDOptions>(options)) return "SGD";
  if (std::holds_alternative<AdamOptions>(options)) return "Adam";
  return "none";
}

namespace optimizers {
Optimizer SGD(SGDOptions options) { return Optimizer{.options = options}; }
Optimizer Adam(AdamOptions options) { return Optimizer{.options = options}; }
}  // namespace optimizers

namespace models_internal {
namespace {

absl::Status BadOption(const std::string& option, float value,
                       const std::string& rule) {
  return absl::InvalidArgumentError(
      absl::StrCat(option, " must be ", rule, ", got ", value));
}

}  // namespace

absl::Status CheckOptimizer(const Optimizer& optimizer) {
  if (const auto* adam = std::get_if<AdamOptions>(&optimizer.options)) {
    const AdamOptions& o = *adam;
    if (!std::isfinite(o.learning_rate) || o.learning_rate < 0) {
      return BadOption("Adam learning_rate", o.learning_rate,
                       "finite and >= 0");
    }
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
  if (const auto* sgd = std::get_if<SGDOptions>(&optimizer.options)) {
    const SGDOptions& o = *sgd;
    if (!std::isfinite(o.learning_rate) || o.learning_rate < 0) {
      return BadOption("SGD learning_rate", o.learning_rate, "finite and >= 0");
    }
    if (!(o.momentum >= 0 && o.momentum <= 1)) {
      return BadOption("SGD momentum", o.momentum, "in [0, 1]");
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      "no optimizer (use optimizers::Adam() or SGD())");
}

absl::Status CheckFits(DataType dtype, const TensorShape& shape, int64_t copies,
                       const std::string& what) {
  absl::Status valid = TensorShape::Validate(shape.dim_sizes(), false);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", valid.message()));
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(shape.num_elements(), DataTypeSize(dtype),
                             &bytes) ||
      __builtin_mul_overflow(bytes, copies, &bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", copies, " x ", DataTypeString(dtype), " ",
                     shape.DebugString(), " is too many bytes to count"));
  }
  const int64_t limit = MaxTensorBytes();
  if (limit > 0 && bytes > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": ", copies, " x ", DataTypeString(dtype), " ",
        shape.DebugString(), " needs ", bytes, " bytes, more than the ", limit,
        " a tensor may take (MaxTensorBytes: by default this "
        "machine's memory)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> NewTensor(DataType dtype, const TensorShape& shape,
                                 bool zero, const std::string& what) {
  GG_RETURN_IF_ERROR(CheckFits(dtype, shape, 1, what));
  absl::StatusOr<Tensor> t =
      zero ? Tensor::Zeros(dtype, shape) : Tensor::Uninitialized(dtype, shape);
  if (!t.ok()) {
    return Annotate(t.status(), what);
  }
  return t;
}

namespace {

// A variable of the optimizer, set to `init` once with `session`.
absl::StatusOr<Output> SlotVariable(Graph& g, const std::string& name,
                                    const Tensor& init, Session& session) {
  GG_ASSIGN_OR_RETURN(
      Output var,
      ops::VarHandleOp(g, init.dtype(), init.shape(), {.name = name}));
  GG_ASSIGN_OR_RETURN(Output value,
                      ops::Const(g, init, {.name = name + "/Initializer"}));
  GG_ASSIGN_OR_RETURN(
      Output assign,
      ops::AssignVariableOp(var, value, {.name = name + "/Assign"}));
  GG_RETURN_IF_ERROR(session.Run({}, {}, {assign}).status());
  return var;  // the initialiser nodes are garbage from here on
}

// The learning rate variable of the optimizer scope `s`, set to `value`.
absl::StatusOr<LearningRateNodes> LearningRateVariable(Graph& g,
                                                       const std::string& s,
                                                       float value,
                                                       Session& session) {
  const std::string name = s + "/learning_rate";
  LearningRateNodes lr;
  GG_ASSIGN_OR_RETURN(
      lr.variable,
      SlotVariable(g, name, Tensor::Scalar<float>(value), session));
  GG_ASSIGN_OR_RETURN(
      lr.read, ops::ReadVariableOp(lr.variable, {.name = name + "/Read"}));
  GG_ASSIGN_OR_RETURN(lr.assign_value,
                      ops::Placeholder(g, DT_FLOAT, TensorShape(),
                                       {.name = name + "/assign_value"}));
  GG_ASSIGN_OR_RETURN(lr.assign,
                      ops::AssignVariableOp(lr.variable, lr.assign_value,
                                            {.name = name + "/Set"}));
  return lr;
}

// "dense_1/kernel" from the VarHandleOp's node name.
std::string SlotBase(const Output& var) { return var.node_name(); }

// What every optimizer's updates are built from (see BuildUpdates).
struct UpdateInputs {
  Graph& graph;
  const std::vector<Output>& variables;
  const std::vector<TensorShape>& shapes;
  const std::vector<Output>& grads;
  const std::vector<NodeHandle>& after;
  const std::string& scope;
  Session& session;
};

// One optimizer's nodes: its learning rate and the updates a step runs.
struct OptimizerUpdates {
  LearningRateNodes learning_rate;
  std::vector<NodeHandle> updates;
};

// Adam under "<scope>/Adam": m and v per variable, ResourceApplyAdam, then
// beta_1^t and beta_2^t advanced once every variable has used them.
absl::StatusOr<OptimizerUpdates> BuildAdamUpdates(const AdamOptions& o,
                                                  const UpdateInputs& in) {
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
    const std::string base = s + "/" + SlotBase(in.variables[i]);
    GG_ASSIGN_OR_RETURN(
        Tensor zeros,
        NewTensor(DT_FLOAT, in.shapes[i], /*zero=*/true, base + "/m and /v"));
    GG_ASSIGN_OR_RETURN(Output m,
                        SlotVariable(g, base + "/m", zeros, in.session));
    GG_ASSIGN_OR_RETURN(Output v,
                        SlotVariable(g, base + "/v", zeros, in.session));
    GG_ASSIGN_OR_RETURN(
        Output apply,
        ops::ResourceApplyAdam(
            in.variables[i], m, v, b1p, b2p, lr, b1, b2, eps, in.grads[i],
            {.name = base + "/ResourceApplyAdam", .control_inputs = in.after}));
    out.updates.push_back(apply.handle());
  }
  // Advance beta^t once every variable has used this step's value.
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

// SGD under "<scope>/SGD": ResourceApplyGradientDescent without momentum;
// with it, a velocity per variable (and Nesterov's look-ahead step).
absl::StatusOr<OptimizerUpdates> BuildSGDUpdates(const SGDOptions& o,
                                                 const UpdateInputs& in) {
  Graph& g = in.graph;
  const std::string s = in.scope + "/SGD";
  OptimizerUpdates out;
  GG_ASSIGN_OR_RETURN(out.learning_rate,
                      LearningRateVariable(g, s, o.learning_rate, in.session));
  const Output lr = out.learning_rate.read;
  if (o.momentum == 0.f && !o.nesterov) {
    for (size_t i = 0; i < in.variables.size(); ++i) {
      GG_ASSIGN_OR_RETURN(Output apply,
                          ops::ResourceApplyGradientDescent(
                              in.variables[i], lr, in.grads[i],
                              {.name = s + "/" + SlotBase(in.variables[i]) +
                                       "/ResourceApplyGradientDescent",
                               .control_inputs = in.after}));
      out.updates.push_back(apply.handle());
    }
    return out;
  }
  GG_ASSIGN_OR_RETURN(Output mom,
                      ops::Const(g, o.momentum, {.name = s + "/momentum"}));
  for (size_t i = 0; i < in.variables.size(); ++i) {
    const std::string base = s + "/" + SlotBase(in.variables[i]);
    GG_ASSIGN_OR_RETURN(
        Tensor zeros,
        NewTensor(DT_FLOAT, in.shapes[i], /*zero=*/true, base + "/momentum"));
    GG_ASSIGN_OR_RETURN(Output velocity,
                        SlotVariable(g, base + "/momentum", zeros, in.session));
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

// The updates of whichever optimizer `optimizer` holds.
absl::StatusOr<OptimizerUpdates> BuildOptimizerUpdates(
    const Optimizer& optimizer, const UpdateInputs& in) {
  if (const auto* adam = std::get_if<AdamOptions>(&optimizer.options)) {
    return BuildAdamUpdates(*adam, in);
  }
  if (const auto* sgd = std::get_if<SGDOptions>(&optimizer.options)) {
    return BuildSGDUpdates(*sgd, in);
  }
  return absl::InvalidArgumentError("Compile: no optimizer given");
}

}  // namespace

absl::StatusOr<UpdateNodes> BuildUpdates(
    const Optimizer& optimizer, const std::vector<Output>& variables,
    const std::vector<TensorShape>& shapes, const std::vector<Output>& grads,
    const std::vector<NodeHandle>& after, const std::string& scope,
    Session& session, const std::vector<NodeHandle>& extra_updates) {
  if (variables.empty()) {
    return absl::InvalidArgumentError("Compile: the model has no weights");
  }
  const UpdateInputs in{.graph = *variables[0].graph(),
                        .variables = variables,
                        .shapes = shapes,
                        .grads = grads,
                        .after = after,
                        .scope = scope,
                        .session = session};
  GG_ASSIGN_OR_RETURN(OptimizerUpdates built,
                      BuildOptimizerUpdates(optimizer, in));
  std::vector<NodeHandle>& updates = built.updates;
  updates.insert(updates.end(), extra_updates.begin(), extra_updates.end());
  UpdateNodes out;
  GG_ASSIGN_OR_RETURN(out.train_op,
                      ops::NoOp(in.graph, {.name = scope + "/train_step",
                                           .control_inputs = updates}));
  out.learning_rate = std::move(built.learning_rate);
  return out;
}

}  // namespace models_internal
}  // namespace graphgc
