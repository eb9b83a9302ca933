// The layer registry and the per-kind dispatch of models/layer_state.h's
// functions: checks, builds, forward nodes, parameter counts, Summary rows
// and variable shapes, each through the layer's LayerKind.
#include "models/layer_registry.h"

#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "models/kind_registry.h"
#include "models/orthogonal.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const KindRegistry<LayerKind, &LayerKind::class_name>& GlobalRegistry() {
  return GlobalKindRegistry<LayerKind, &LayerKind::class_name>(
      "layer kind", BuiltinLayerKinds);
}

}  // namespace

const LayerKind* FindLayerKind(const std::string& class_name) {
  return GlobalRegistry().Find(class_name);
}

std::vector<const LayerKind*> LayerKinds() { return GlobalRegistry().kinds(); }

std::string KnownKinds() { return GlobalRegistry().Names(); }

std::string KindName(LayerState::Kind kind) {
  return kind == nullptr ? "" : kind->class_name;
}

std::string DefaultName(LayerState::Kind kind) {
  return kind == nullptr ? "layer" : kind->default_name;
}

bool IsInputLayer(const LayerState& layer) {
  return layer.kind != nullptr && layer.kind->is_input;
}

absl::StatusOr<TensorShape> OutputShape(const LayerState& layer,
                                        const TensorShape& in) {
  if (layer.kind == nullptr) return absl::InternalError("unknown layer kind");
  if (layer.kind->output_shape == nullptr) return in;
  return layer.kind->output_shape(layer, in);
}

std::vector<std::vector<int64_t>> VariableShapes(const LayerState& layer,
                                                 const TensorShape& in) {
  std::vector<std::vector<int64_t>> out;
  if (layer.kind == nullptr || layer.kind->weights == nullptr) return out;
  for (const WeightSpec& w : layer.kind->weights(layer, in)) {
    out.emplace_back(w.shape.dim_sizes().begin(), w.shape.dim_sizes().end());
  }
  return out;
}

absl::StatusOr<TensorShape> CheckLayer(LayerState& layer, Graph& graph,
                                       const TensorShape& in) {
  GG_RETURN_IF_ERROR(layer.error);
  GG_ASSIGN_OR_RETURN(TensorShape out, OutputShape(layer, in));
  const BuiltLayer* built = layer.built();
  if (built == nullptr) {
    if (layer.kind->check_weights != nullptr) {
      GG_RETURN_IF_ERROR(layer.kind->check_weights(layer, in));
    }
    return out;
  }
  const std::string& name = built->name();
  if (built->graph != &graph) {
    return absl::InvalidArgumentError(
        absl::StrCat("layer '", name, "' belongs to another graph"));
  }
  if (!layer.kind->is_input && built->shape != in) {
    if (layer.kind->rebuilt_message != nullptr) {
      return absl::InvalidArgumentError(
          layer.kind->rebuilt_message(name, built->shape, in));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("layer '", name, "' was built for inputs ",
                     KerasShape(built->shape), " but gets ", KerasShape(in)));
  }
  return out;
}

namespace {

// The input layer's placeholder: [batch, shape...], owned by the layer.
absl::StatusOr<Output> InputPlaceholder(const LayerState& layer, Graph& graph,
                                        const std::string& scope,
                                        const std::string& label) {
  std::vector<int64_t> dims = {-1};
  for (int i = 0; i < layer.input_shape.dims(); ++i) {
    dims.push_back(layer.input_shape[i]);
  }
  GG_ASSIGN_OR_RETURN(Output x,
                      ops::Placeholder(graph, DT_FLOAT, dims, {.name = scope}));
  return Output(x.handle().WithOwner(label), x.index());
}

// The kind's variables, made in Keras's order and initialised in one run.
absl::Status BuildVariables(const LayerState& layer, Graph& graph,
                            const TensorShape& in, const std::string& scope,
                            Session& session, std::vector<Variable>& vars) {
  if (layer.kind->weights == nullptr) return absl::OkStatus();
  const std::string label = "Layer '" + scope + "'";
  const std::vector<WeightSpec> specs = layer.kind->weights(layer, in);
  for (const WeightSpec& spec : specs) {
    GG_ASSIGN_OR_RETURN(Variable v,
                        MakeVariable(graph, scope + "/" + spec.name, spec.shape,
                                     label, spec.trainable));
    vars.push_back(std::move(v));
  }
  std::vector<Tensor> init;
  for (size_t i = 0; i < specs.size(); ++i) {
    const WeightSpec& spec = specs[i];
    if (spec.init == Initializer::kGlorotUniform) {
      if (spec.fan_in <= 0 || spec.fan_out <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(LayerLabel(layer), ": ", spec.name, " ",
                         spec.shape.DebugString(), " has too many elements"));
      }
      GG_ASSIGN_OR_RETURN(Tensor t,
                          GlorotUniform(spec.shape, spec.fan_in, spec.fan_out,
                                        spec.seed, vars[i].name));
      init.push_back(std::move(t));
    } else if (spec.init == Initializer::kOrthogonal) {
      GG_ASSIGN_OR_RETURN(Tensor t,
                          Orthogonal(spec.shape, spec.seed, vars[i].name));
      init.push_back(std::move(t));
    } else if (spec.init == Initializer::kUnitForgetBias) {
      GG_ASSIGN_OR_RETURN(Tensor t, Filled(spec.shape, 0.f, vars[i].name));
      auto v = t.mutable_data<float>();
      const size_t quarter = v.size() / 4;
      for (size_t k = quarter; k < 2 * quarter; ++k) v[k] = 1.f;
      init.push_back(std::move(t));
    } else if (spec.init == Initializer::kRandomUniform) {
      GG_ASSIGN_OR_RETURN(Tensor t,
                          RandomUniform(spec.shape, spec.minval, spec.maxval,
                                        spec.seed, vars[i].name));
      init.push_back(std::move(t));
    } else {
      GG_ASSIGN_OR_RETURN(
          Tensor t,
          Filled(spec.shape, spec.init == Initializer::kOnes ? 1.f : 0.f,
                 vars[i].name));
      init.push_back(std::move(t));
    }
  }
  if (vars.empty()) return absl::OkStatus();
  return AssignAll(vars, std::move(init), session);
}

}  // namespace

absl::Status BuildLayer(LayerState& layer, Graph& graph, const TensorShape& in,
                        Session& session) {
  GG_RETURN_IF_ERROR(CheckLayer(layer, graph, in).status());
  WriterLock l(layer.mu);
  // Checked again under the lock: another thread may have built it since.
  if (const BuiltLayer* built = layer.built(); built != nullptr) {
    return CheckLayer(layer, graph, in).status();
  }
  auto built = std::make_unique<BuiltLayer>();
  ScopeReservation scope = graph.ReserveScope(!layer.requested_name.empty()
                                                  ? layer.requested_name
                                                  : DefaultName(layer.kind));
  const std::string label = "Layer '" + scope.name() + "'";
  std::vector<Variable> vars;
  if (layer.kind->is_input) {
    GG_ASSIGN_OR_RETURN(built->placeholder,
                        InputPlaceholder(layer, graph, scope.name(), label));
  } else {
    GG_RETURN_IF_ERROR(
        BuildVariables(layer, graph, in, scope.name(), session, vars));
  }
  built->variables = std::move(vars);
  built->shape = in;
  built->graph = &graph;
  built->scope = std::move(scope);
  layer.Publish(std::move(built));
  return absl::OkStatus();
}

const BuiltLayer& LayerState::Publish(std::unique_ptr<const BuiltLayer> layer) {
  storage_ = std::move(layer);
  built_.store(storage_.get(), std::memory_order_release);
  return *storage_;
}

bool HasTrainingPath(const LayerState& layer) {
  return layer.kind->has_training_path != nullptr &&
         layer.kind->has_training_path(layer);
}

absl::StatusOr<LayerOutputs> ApplyLayer(const LayerState& layer,
                                        const Output& x, bool training) {
  const BuiltLayer* built = layer.built();
  if (built == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(LayerLabel(layer), " is not built"));
  }
  if (layer.kind->apply == nullptr) {
    return absl::InternalError(
        absl::StrCat("layer '", built->name(), "' has no forward nodes"));
  }
  return layer.kind->apply(layer, *built, x, training);
}

bool TakesList(const LayerState& layer) {
  return layer.kind != nullptr && layer.kind->list_output_shape != nullptr;
}

bool TakesInputCount(const LayerState& layer, size_t n) {
  if (layer.kind == nullptr) return false;
  if (layer.kind->is_input) return n == 0;
  if (!TakesList(layer)) return n == 1;
  const LayerKind& k = *layer.kind;
  return n >= static_cast<size_t>(k.min_inputs) &&
         (k.max_inputs == 0 || n <= static_cast<size_t>(k.max_inputs));
}

std::string InputCountText(const LayerState& layer) {
  if (layer.kind == nullptr || layer.kind->is_input) return "0";
  if (!TakesList(layer)) return "1";
  const LayerKind& k = *layer.kind;
  if (k.max_inputs == k.min_inputs)
    return absl::StrCat("exactly ", k.min_inputs);
  if (k.max_inputs == 0) return absl::StrCat("at least ", k.min_inputs);
  return absl::StrCat(k.min_inputs, " to ", k.max_inputs);
}

absl::StatusOr<TensorShape> CallOutputShape(
    const LayerState& layer, const std::vector<TensorShape>& in) {
  if (layer.kind == nullptr) return absl::InternalError("unknown layer kind");
  // An input layer is called on its own shape.
  const bool counted =
      layer.kind->is_input ? in.size() == 1 : TakesInputCount(layer, in.size());
  if (!counted || in.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), " should be called on ", InputCountText(layer),
        " inputs. Received: input_shape=", KerasShapes(in)));
  }
  if (TakesList(layer)) return layer.kind->list_output_shape(layer, in);
  return OutputShape(layer, in[0]);
}

absl::StatusOr<TensorShape> CheckLayerCall(LayerState& layer, Graph& graph,
                                           const std::vector<TensorShape>& in) {
  if (in.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer), " is called on no inputs"));
  }
  GG_ASSIGN_OR_RETURN(TensorShape out, CheckLayer(layer, graph, in[0]));
  if (!TakesList(layer)) return out;
  return CallOutputShape(layer, in);
}

absl::StatusOr<LayerOutputs> ApplyLayerCall(const LayerState& layer,
                                            const std::vector<Output>& xs,
                                            bool training) {
  if (!TakesList(layer)) {
    if (xs.size() != 1) {
      return absl::InternalError(absl::StrCat(LayerLabel(layer), " applied to ",
                                              xs.size(), " values"));
    }
    return ApplyLayer(layer, xs[0], training);
  }
  const BuiltLayer* built = layer.built();
  if (built == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(LayerLabel(layer), " is not built"));
  }
  return layer.kind->list_apply(layer, *built, xs, training);
}

std::string KerasShapes(const std::vector<TensorShape>& in) {
  std::string out = "[";
  for (size_t i = 0; i < in.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? ", " : "", KerasShape(in[i]));
  }
  return out + "]";
}

namespace {

// A per-sample shape as Keras prints it without its batch: "(8,)", "(2, 3)".
std::string SampleShape(const TensorShape& shape) {
  std::string out = "(";
  for (int i = 0; i < shape.dims(); ++i) {
    absl::StrAppend(&out, i > 0 ? ", " : "", shape[i]);
  }
  return out + (shape.dims() == 1 ? ",)" : ")");
}

}  // namespace

absl::StatusOr<TensorShape> ElementwiseMergeShape(
    const LayerState& layer, const std::vector<TensorShape>& in) {
  TensorShape out = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    const TensorShape& s = in[i];
    // Keras reshapes inputs of different ranks against the batch axis; a
    // rank mismatch is refused here.
    bool ok = s.dims() == out.dims();
    std::vector<int64_t> dims;
    for (int d = 0; ok && d < s.dims(); ++d) {
      if (out[d] == s[d] || s[d] == 1) {
        dims.push_back(out[d]);
      } else if (out[d] == 1) {
        dims.push_back(s[d]);
      } else {
        ok = false;
      }
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat(LayerLabel(layer),
                       ": Inputs have incompatible shapes. Received "
                       "shapes ",
                       SampleShape(out), " and ", SampleShape(s)));
    }
    out = TensorShape(dims);
  }
  return out;
}

absl::StatusOr<Output> FoldInputs(
    const std::vector<Output>& xs, const std::string& scope,
    const std::string& op_name,
    absl::StatusOr<Output> (*op)(const Output&, const Output&,
                                 ops::OpOptions)) {
  Output out = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    const std::string suffix = i == 1 ? "" : absl::StrCat("_", i - 1);
    GG_ASSIGN_OR_RETURN(
        out, op(out, xs[i], {.name = scope + "/" + op_name + suffix}));
  }
  return out;
}

Json MergeConfig(const LayerState&, const std::string& name) {
  return CommonConfig(name);
}

absl::StatusOr<std::string> MergeConfigName(const ConfigObject& config) {
  return config.String("name", "");
}

ParamCount CountParams(const LayerState& layer) {
  ParamCount count;
  const BuiltLayer* built = layer.built();
  if (built == nullptr) return count;
  for (const Variable& v : built->variables) {
    // Each built variable's shape was checked (CheckFits); the sum is
    // checked too, and saturates (it cannot be reached in memory anyway).
    int64_t& sum = v.trainable ? count.trainable : count.non_trainable;
    if (__builtin_add_overflow(sum, v.shape.num_elements(), &sum)) {
      sum = std::numeric_limits<int64_t>::max();
    }
  }
  return count;
}

SummaryRow LayerSummaryRow(const LayerState& layer, const std::string& name,
                           const TensorShape& out) {
  SummaryRow row;
  row.params = CountParams(layer);
  if (layer.kind->summary_fields != nullptr) {
    row.fields = layer.kind->summary_fields(layer, name, out, row.params);
    return row;
  }
  int64_t total = 0;
  if (__builtin_add_overflow(row.params.trainable, row.params.non_trainable,
                             &total)) {
    total = std::numeric_limits<int64_t>::max();
  }
  row.fields = {absl::StrCat(name, " (", layer.kind->class_name, ")"),
                KerasShape(out), absl::StrCat(total)};
  return row;
}

}  // namespace models_internal
}  // namespace graphgc
