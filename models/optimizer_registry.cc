#include "models/optimizer_registry.h"

#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/optimizer_base.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

// Each defined by its file under models/optimizers/.
const OptimizerKind& AdadeltaKind();
const OptimizerKind& AdagradKind();
const OptimizerKind& AdamKind();
const OptimizerKind& AdamWKind();
const OptimizerKind& AdamaxKind();
const OptimizerKind& LionKind();
const OptimizerKind& NadamKind();
const OptimizerKind& RMSpropKind();
const OptimizerKind& SGDKind();

const std::vector<const OptimizerKind*>& OptimizerKinds() {
  static const auto* kinds = new std::vector<const OptimizerKind*>{
      &AdadeltaKind(), &AdagradKind(), &AdamKind(),
      &AdamWKind(),    &AdamaxKind(),  &LionKind(),
      &NadamKind(),    &RMSpropKind(), &SGDKind(),
  };
  return *kinds;
}

const OptimizerKind* FindOptimizerKind(const Optimizer& optimizer) {
  for (const OptimizerKind* kind : OptimizerKinds()) {
    if (kind->holds(optimizer)) return kind;
  }
  return nullptr;
}

const OptimizerKind* FindOptimizerKindByName(const std::string& name) {
  for (const OptimizerKind* kind : OptimizerKinds()) {
    if (name == kind->class_name || name == kind->keras_name) return kind;
  }
  return nullptr;
}

std::string KnownOptimizers() {
  std::vector<std::string> names;
  for (const OptimizerKind* kind : OptimizerKinds()) {
    names.push_back(kind->class_name);
  }
  return absl::StrJoin(names, ", ");
}

absl::Status CheckOptimizer(const Optimizer& optimizer) {
  const OptimizerKind* kind = FindOptimizerKind(optimizer);
  if (kind == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no optimizer (use one of optimizers::", KnownOptimizers(), ")"));
  }
  GG_RETURN_IF_ERROR(kind->check(optimizer));
  return CheckBaseOptions(kind->class_name, optimizer.base);
}

absl::Status BadOption(const std::string& option, float value,
                       const std::string& rule) {
  return absl::InvalidArgumentError(
      absl::StrCat(option, " must be ", rule, ", got ", value));
}

absl::Status CheckLearningRate(const std::string& class_name, float value) {
  if (!std::isfinite(value) || value < 0) {
    return BadOption(class_name + " learning_rate", value, "finite and >= 0");
  }
  return absl::OkStatus();
}

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

absl::StatusOr<Output> ZeroSlot(const UpdateInputs& in, size_t i,
                                const std::string& base,
                                const std::string& slot) {
  const std::string name = base + "/" + slot;
  GG_ASSIGN_OR_RETURN(Tensor zeros,
                      NewTensor(DT_FLOAT, in.shapes[i], /*zero=*/true, name));
  return SlotVariable(in.graph, name, zeros, in.session);
}

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

absl::StatusOr<Output> ScalarConst(Graph& g, float value,
                                   const std::string& name) {
  return ops::Const(g, value, {.name = name});
}

absl::StatusOr<Output> StepPower(Graph& g, float base, const Output& step,
                                 const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output b, ScalarConst(g, base, name + "/base"));
  GG_ASSIGN_OR_RETURN(Output log_b, ops::Log(b, {.name = name + "/Log"}));
  GG_ASSIGN_OR_RETURN(Output e, ops::Mul(step, log_b, {.name = name + "/mul"}));
  return ops::Exp(e, {.name = name});
}

absl::StatusOr<Output> AbsOf(const Output& x, const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output neg, ops::Neg(x, {.name = name + "/Neg"}));
  return ops::Maximum(x, neg, {.name = name});
}

absl::StatusOr<Output> SignOf(const Output& x, const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output zero,
                      ops::ScalarLike(x, 0, {.name = name + "/zero"}));
  GG_ASSIGN_OR_RETURN(Output pos,
                      ops::Greater(x, zero, {.name = name + "/Greater"}));
  GG_ASSIGN_OR_RETURN(Output neg, ops::Less(x, zero, {.name = name + "/Less"}));
  GG_ASSIGN_OR_RETURN(Output p,
                      ops::Cast(pos, DT_FLOAT, {.name = name + "/Cast"}));
  GG_ASSIGN_OR_RETURN(Output n,
                      ops::Cast(neg, DT_FLOAT, {.name = name + "/Cast_1"}));
  return ops::Sub(p, n, {.name = name});
}

absl::StatusOr<SlotUpdate> MovingAverageSlot(
    const Output& slot, const Output& x, float beta,
    const std::vector<NodeHandle>& after, const std::string& name) {
  Graph& g = *slot.graph();
  GG_ASSIGN_OR_RETURN(
      Output old, ops::ReadVariableOp(
                      slot, {.name = name + "/Read", .control_inputs = after}));
  GG_ASSIGN_OR_RETURN(Output rate, ScalarConst(g, 1.f - beta, name + "/rate"));
  GG_ASSIGN_OR_RETURN(Output d, ops::Sub(x, old, {.name = name + "/sub"}));
  GG_ASSIGN_OR_RETURN(Output step, ops::Mul(d, rate, {.name = name + "/mul"}));
  SlotUpdate out;
  GG_ASSIGN_OR_RETURN(out.value, ops::Add(old, step, {.name = name + "/add"}));
  GG_ASSIGN_OR_RETURN(
      out.assign,
      ops::AssignVariableOp(slot, out.value, {.name = name + "/Update"}));
  return out;
}

std::string SlotBase(const std::string& s, const Output& var) {
  return s + "/" + var.node_name();
}

namespace {

// The variable node `name` the kind's build made, with a read for Save.
absl::StatusOr<OptimizerVariable> SavedVariable(Graph& g,
                                                const std::string& name,
                                                DataType dtype,
                                                const TensorShape& shape) {
  std::optional<NodeHandle> node = g.FindNode(name);
  if (!node.has_value()) {
    return absl::InternalError(
        absl::StrCat("Compile: the optimizer built no variable '", name, "'"));
  }
  OptimizerVariable v{
      .variable = Output(*node, 0), .dtype = dtype, .shape = shape};
  GG_ASSIGN_OR_RETURN(
      v.read, ops::ReadVariableOp(v.variable, {.name = name + "/ReadForSave"}));
  return v;
}

// Keras's optimizer.variables after iterations and the learning rate, and
// the step powers, as `kind`'s state_layout names them under scope `s`.
absl::Status CollectState(const OptimizerKind& kind, const Optimizer& optimizer,
                          const UpdateInputs& in, const std::string& s,
                          UpdateNodes& out) {
  if (kind.state_layout == nullptr) return absl::OkStatus();
  const OptimizerStateLayout layout = kind.state_layout(optimizer);
  for (const std::vector<std::string>& group : layout.slot_groups) {
    for (size_t i = 0; i < in.variables.size(); ++i) {
      for (const std::string& slot : group) {
        GG_ASSIGN_OR_RETURN(
            OptimizerVariable v,
            SavedVariable(in.graph, SlotBase(s, in.variables[i]) + "/" + slot,
                          DT_FLOAT, in.shapes[i]));
        out.state.push_back(std::move(v));
      }
    }
  }
  for (const std::string& name : layout.scalars) {
    GG_ASSIGN_OR_RETURN(
        OptimizerVariable v,
        SavedVariable(in.graph, s + "/" + name, DT_FLOAT, TensorShape()));
    out.state.push_back(std::move(v));
  }
  for (const auto& [name, base] : layout.step_powers) {
    std::optional<NodeHandle> node = in.graph.FindNode(s + "/" + name);
    if (!node.has_value()) {
      return absl::InternalError(absl::StrCat(
          "Compile: the optimizer built no variable '", s, "/", name, "'"));
    }
    out.step_powers.push_back({.variable = Output(*node, 0), .base = base});
  }
  return absl::OkStatus();
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
  const OptimizerKind* kind = FindOptimizerKind(optimizer);
  if (kind == nullptr) {
    return absl::InvalidArgumentError("Compile: no optimizer given");
  }
  Graph& g = *variables[0].graph();
  const std::string s = scope + "/" + kind->class_name;
  Optimizer copy = optimizer;
  // A schedule's rate at step 0 until Fit sets each step's.
  const float rate =
      optimizer.learning_rate_schedule.has_value()
          ? static_cast<float>(
                optimizer.learning_rate_schedule->LearningRateAt(0))
          : *kind->learning_rate(copy);
  GG_ASSIGN_OR_RETURN(LearningRateNodes lr,
                      LearningRateVariable(g, s, rate, session));
  // Keras's `iterations`, counted after every update of the step.
  GG_ASSIGN_OR_RETURN(
      Output iterations,
      SlotVariable(g, s + "/iteration", Tensor::Scalar<int64_t>(0), session));
  GG_ASSIGN_OR_RETURN(
      Output iteration,
      ops::ReadVariableOp(iterations, {.name = s + "/iteration/Read"}));
  GG_ASSIGN_OR_RETURN(
      Output iteration_f,
      ops::Cast(iteration, DT_FLOAT, {.name = s + "/iteration/Cast"}));
  GG_ASSIGN_OR_RETURN(Output one, ScalarConst(g, 1.f, s + "/one"));
  GG_ASSIGN_OR_RETURN(Output local_step,
                      ops::Add(iteration_f, one, {.name = s + "/local_step"}));
  // Keras's order: clip the gradients, decay the weights, update.
  GG_ASSIGN_OR_RETURN(std::vector<Output> clipped,
                      ClipGradients(optimizer.base, grads, s));
  // The decay writes the weights only once the gradients are computed.
  std::vector<NodeHandle> before_decay = after;
  for (const Output& grad : clipped) before_decay.push_back(grad.handle());
  GG_ASSIGN_OR_RETURN(std::vector<NodeHandle> decays,
                      WeightDecayUpdates(optimizer.base.weight_decay.value_or(
                                             kind->default_weight_decay),
                                         lr.read, variables, before_decay, s));
  std::vector<NodeHandle> before_update = after;
  before_update.insert(before_update.end(), decays.begin(), decays.end());
  const UpdateInputs in{.graph = g,
                        .variables = variables,
                        .shapes = shapes,
                        .grads = clipped,
                        .after = before_update,
                        .scope = scope,
                        .session = session,
                        .lr = lr.read,
                        .local_step = local_step};
  GG_ASSIGN_OR_RETURN(OptimizerUpdates built, kind->build(optimizer, in));
  std::vector<NodeHandle>& updates = built.updates;
  updates.insert(updates.end(), decays.begin(), decays.end());
  GG_ASSIGN_OR_RETURN(
      Output step_one,
      ops::Const(g, int64_t{1}, {.name = s + "/iteration/one"}));
  GG_ASSIGN_OR_RETURN(Output count,
                      ops::AssignAddVariableOp(iterations, step_one,
                                               {.name = s + "/iteration/Update",
                                                .control_inputs = updates}));
  updates.push_back(count.handle());
  updates.insert(updates.end(), extra_updates.begin(), extra_updates.end());
  UpdateNodes out;
  GG_ASSIGN_OR_RETURN(out.train_op, ops::NoOp(g, {.name = scope + "/train_step",
                                                  .control_inputs = updates}));
  // Keras's order: iterations, the learning rate variable (a schedule is
  // no variable in Keras), the kind's own.
  out.state.push_back({.variable = iterations,
                       .read = iteration,
                       .dtype = DT_INT64,
                       .shape = TensorShape()});
  if (!optimizer.learning_rate_schedule.has_value()) {
    out.state.push_back({.variable = lr.variable,
                         .read = lr.read,
                         .dtype = DT_FLOAT,
                         .shape = TensorShape()});
  }
  GG_RETURN_IF_ERROR(CollectState(*kind, optimizer, in, s, out));
  out.learning_rate = std::move(lr);
  out.iterations = iterations;
  out.iterations_read = iteration;
  return out;
}

}  // namespace models_internal

std::string Optimizer::name() const {
  const models_internal::OptimizerKind* kind =
      models_internal::FindOptimizerKind(*this);
  return kind != nullptr ? kind->class_name : "none";
}

}  // namespace graphgc
