// Keras's optimizer.variables read from model.weights.h5 and set on a
// compiled model: decoded against the model's own dtypes and shapes, then
// assigned in one run.
#include "models/optimizer_state.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/model_state.h"
#include "models/saving_access.h"
#include "ops/ops.h"
#include "serialize/keras_weights.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

namespace {

absl::Status MovedFromModel() {
  return absl::FailedPreconditionError(
      "the model was moved from (use the object it was moved to)");
}

}  // namespace

absl::StatusOr<std::vector<std::pair<DataType, TensorShape>>>
SavingAccess::OptimizerSpec(const Sequential& model) {
  if (model.state_ == nullptr) return MovedFromModel();
  ModelState& m = *model.state_;
  ModelCall call(m);
  std::vector<std::pair<DataType, TensorShape>> spec;
  if (!m.compiled) return spec;
  for (const OptimizerVariable& v : m.optimizer_state) {
    spec.emplace_back(v.dtype, v.shape);
  }
  return spec;
}

absl::Status SavingAccess::AssignOptimizerState(
    Sequential& model, const std::vector<Tensor>& values) {
  if (model.state_ == nullptr) return MovedFromModel();
  ModelState& m = *model.state_;
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  if (!m.compiled || values.size() != m.optimizer_state.size()) {
    return absl::InternalError(absl::StrCat(
        "optimizer state of '", m.scope.name(), "': ", values.size(),
        " values for ", m.optimizer_state.size(), " variables"));
  }
  Graph& g = *m.graph;
  std::vector<std::pair<Output, Tensor>> feeds;
  std::vector<Output> targets;
  auto assign = [&](const Output& variable, Tensor value) -> absl::Status {
    const std::string name =
        g.UniqueScope(absl::StrCat(variable.node_name(), "/Restore"));
    GG_ASSIGN_OR_RETURN(Output in,
                        ops::Placeholder(g, value.dtype(), value.shape(),
                                         {.name = name + "/value"}));
    GG_ASSIGN_OR_RETURN(Output set,
                        ops::AssignVariableOp(variable, in, {.name = name}));
    feeds.emplace_back(in, std::move(value));
    targets.push_back(set);
    return absl::OkStatus();
  };
  for (size_t i = 0; i < values.size(); ++i) {
    GG_RETURN_IF_ERROR(assign(m.optimizer_state[i].variable, values[i]));
  }
  // Keras computes beta^(iterations + 1) each step; ResourceApplyAdam
  // keeps it in a variable, set here from the restored count (the first
  // variable, int64).
  const double next_step =
      static_cast<double>(values[0].data<int64_t>()[0]) + 1.0;
  for (const StepPowerVariable& p : m.optimizer_step_powers) {
    GG_RETURN_IF_ERROR(
        assign(p.variable, Tensor::Scalar<float>(static_cast<float>(std::pow(
                               static_cast<double>(p.base), next_step)))));
  }
  return m.session->Run(feeds, {}, targets).status();
}

absl::StatusOr<bool> RestoreOptimizerState(Sequential& model,
                                           const std::string& h5,
                                           const std::string& file) {
  GG_ASSIGN_OR_RETURN(const auto spec, SavingAccess::OptimizerSpec(model));
  if (spec.empty()) return false;
  LayerWeightsSpec wanted{.path = kOptimizerGroup};
  for (const auto& [dtype, shape] : spec) {
    wanted.dtypes.push_back(dtype);
    wanted.shapes.push_back(shape);
  }
  absl::StatusOr<std::vector<std::vector<Tensor>>> values =
      DecodeKerasWeights(h5, {wanted}, file);
  // Absent (a file saved uncompiled, or before optimizer state was saved),
  // another optimizer's count, dtypes or shapes (InvalidArgument), or more
  // state than the file can hold (ResourceExhausted, before reading): the
  // optimizer stays fresh, as Keras skips a count mismatch.
  if (absl::IsInvalidArgument(values.status()) ||
      absl::IsResourceExhausted(values.status())) {
    return false;
  }
  GG_RETURN_IF_ERROR(values.status());
  std::vector<Tensor>& state = (*values)[0];
  if (state.empty() || state[0].data<int64_t>()[0] < 0) return false;
  GG_RETURN_IF_ERROR(SavingAccess::AssignOptimizerState(model, state));
  return true;
}

}  // namespace models_internal
}  // namespace graphgc
