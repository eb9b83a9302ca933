#include "models/optimizer_registry.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

// Each defined by its file under models/optimizers/.
const OptimizerKind& AdamKind();
const OptimizerKind& RMSpropKind();
const OptimizerKind& SGDKind();

const std::vector<const OptimizerKind*>& OptimizerKinds() {
  static const auto* kinds = new std::vector<const OptimizerKind*>{
      &AdamKind(),
      &RMSpropKind(),
      &SGDKind(),
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
  return kind->check(optimizer);
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

std::string SlotBase(const std::string& s, const Output& var) {
  return s + "/" + var.node_name();
}

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
  const UpdateInputs in{.graph = *variables[0].graph(),
                        .variables = variables,
                        .shapes = shapes,
                        .grads = grads,
                        .after = after,
                        .scope = scope,
                        .session = session};
  GG_ASSIGN_OR_RETURN(OptimizerUpdates built, kind->build(optimizer, in));
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

std::string Optimizer::name() const {
  const models_internal::OptimizerKind* kind =
      models_internal::FindOptimizerKind(*this);
  return kind != nullptr ? kind->class_name : "none";
}

}  // namespace graphgc
