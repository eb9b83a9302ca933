// The Layer handle, the layers:: builders (option checks), and what every
// kind shares: names, variables, initialisers, activations, and the
// per-kind dispatch of shape checks, builds and forward nodes. Dense lives
// here too; the image layers are in conv_layers.cc, the shape-only and
// Dropout layers in core_layers.cc.
#include "models/layers.h"

#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/layer_state.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {

using models_internal::LayerState;
using Kind = models_internal::LayerState::Kind;

namespace models_internal {

std::string KindName(Kind kind) {
  switch (kind) {
    case Kind::kInput:
      return "InputLayer";
    case Kind::kDense:
      return "Dense";
    case Kind::kConv2D:
      return "Conv2D";
    case Kind::kMaxPooling2D:
      return "MaxPooling2D";
    case Kind::kFlatten:
      return "Flatten";
    case Kind::kDropout:
      return "Dropout";
    case Kind::kBatchNormalization:
      return "BatchNormalization";
    case Kind::kReshape:
      return "Reshape";
    case Kind::kActivation:
      return "Activation";
  }
  return "";
}

std::string DefaultName(Kind kind) {
  switch (kind) {
    case Kind::kInput:
      return "input";
    case Kind::kDense:
      return "dense";
    case Kind::kConv2D:
      return "conv2d";
    case Kind::kMaxPooling2D:
      return "max_pooling2d";
    case Kind::kFlatten:
      return "flatten";
    case Kind::kDropout:
      return "dropout";
    case Kind::kBatchNormalization:
      return "batch_normalization";
    case Kind::kReshape:
      return "reshape";
    case Kind::kActivation:
      return "activation";
  }
  return "layer";
}

std::string LayerLabel(const LayerState& layer) {
  const std::string kind =
      layer.kind == Kind::kInput ? "Input" : KindName(layer.kind);
  return layer.requested_name.empty()
             ? kind
             : absl::StrCat(kind, " '", layer.requested_name, "'");
}

std::string KerasShape(const TensorShape& sample_shape) {
  std::string out = "(None";
  for (int i = 0; i < sample_shape.dims(); ++i) {
    absl::StrAppend(&out, ", ", sample_shape[i]);
  }
  return out + ")";
}

bool KnownActivation(const std::string& act) {
  return act.empty() || act == "linear" || act == "relu" || act == "sigmoid" ||
         act == "tanh" || act == "softmax";
}

absl::StatusOr<Output> ApplyActivation(const std::string& act, const Output& x,
                                       const std::string& scope) {
  if (act == "relu") return ops::Relu(x, {.name = scope + "/Relu"});
  if (act == "sigmoid") return ops::Sigmoid(x, {.name = scope + "/Sigmoid"});
  if (act == "tanh") return ops::Tanh(x, {.name = scope + "/Tanh"});
  if (act == "softmax") return ops::Softmax(x, {.name = scope + "/Softmax"});
  return x;
}

}  // namespace models_internal

using models_internal::BuiltLayer;
using models_internal::DefaultName;
using models_internal::KindName;
using models_internal::LayerLabel;

Layer MakeLayer(std::shared_ptr<LayerState> state) {
  return Layer(std::move(state));
}

std::string Layer::kind() const {
  if (state_ == nullptr) return "";
  return KindName(state_->kind);
}

std::string Layer::name() const {
  if (state_ == nullptr) return "";
  const BuiltLayer* built = state_->built();
  return built != nullptr ? built->name() : state_->requested_name;
}

bool Layer::built() const {
  return state_ != nullptr && state_->built() != nullptr;
}

int64_t Layer::units() const {
  if (state_ == nullptr) return 0;
  switch (state_->kind) {
    case Kind::kInput:
      return state_->input_shape.dims() == 1 ? state_->input_shape[0] : -1;
    case Kind::kDense:
    case Kind::kConv2D:
      return state_->units;
    default:
      return 0;
  }
}

namespace {

std::shared_ptr<LayerState> NewState(Kind kind, std::string name) {
  auto state = std::make_shared<LayerState>();
  state->kind = kind;
  state->requested_name = std::move(name);
  return state;
}

absl::Status UnknownActivation(const LayerState& layer,
                               const std::string& act) {
  return absl::InvalidArgumentError(
      absl::StrCat(LayerLabel(layer), ": unknown activation '", act,
                   "' (use linear, relu, sigmoid, tanh or softmax)"));
}

// A Keras size pair ("kernel_size", "strides", ...): one value (used for
// both) or two, each >= 1; `out` gets [h, w].
absl::Status SizePair(const LayerState& layer, const std::string& what,
                      const std::vector<int64_t>& given,
                      std::vector<int64_t>& out) {
  if (given.size() == 1) {
    out = {given[0], given[0]};
  } else if (given.size() == 2) {
    out = given;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": ", what, " must have 1 or 2 values, got ",
        given.size(), " ([", absl::StrJoin(given, ", "), "])"));
  }
  if (out[0] < 1 || out[1] < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer), ": ", what, " must be >= 1, got [",
                     absl::StrJoin(given, ", "), "]"));
  }
  return absl::OkStatus();
}

absl::Status Padding(const LayerState& layer, const std::string& padding) {
  if (padding == "valid" || padding == "same") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(LayerLabel(layer),
                   ": padding must be \"valid\" or \"same\", "
                   "got \"",
                   padding, "\""));
}

}  // namespace

namespace layers {

Layer Input(TensorShape shape, std::string name) {
  auto state = NewState(Kind::kInput, std::move(name));
  state->input_shape = shape;
  bool ok = shape.dims() >= 1;
  for (int i = 0; i < shape.dims(); ++i) ok = ok && shape[i] >= 1;
  if (ok) ok = shape.CheckedNumElements().ok();
  if (!ok) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state), ": shape ", shape.DebugString(),
        " is not supported; give known sizes >= 1 without the batch "
        "dimension, e.g. Input({10}) or Input({8, 8, 1})"));
  }
  return MakeLayer(std::move(state));
}

Layer Dense(int64_t units, DenseOptions options) {
  auto state = NewState(Kind::kDense, options.name);
  state->units = units;
  state->activation = options.activation;
  state->dense = std::move(options);
  const std::string label = LayerLabel(*state);
  if (units < 1) {
    state->error = absl::InvalidArgumentError(
        absl::StrCat(label, ": units must be >= 1, got ", units));
  } else if (!models_internal::KnownActivation(state->activation)) {
    state->error = UnknownActivation(*state, state->activation);
  }
  return MakeLayer(std::move(state));
}

Layer Conv2D(int64_t filters, std::vector<int64_t> kernel_size,
             Conv2DOptions options) {
  auto state = NewState(Kind::kConv2D, options.name);
  state->units = filters;
  state->activation = options.activation;
  state->padding = options.padding;
  state->conv = std::move(options);
  absl::Status s;
  if (filters < 1) {
    s = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state), ": filters must be >= 1, got ", filters));
  }
  if (s.ok()) s = SizePair(*state, "kernel_size", kernel_size, state->window);
  if (s.ok())
    s = SizePair(*state, "strides", state->conv.strides, state->strides);
  if (s.ok()) s = Padding(*state, state->padding);
  if (s.ok() && !models_internal::KnownActivation(state->activation)) {
    s = UnknownActivation(*state, state->activation);
  }
  state->error = s;
  return MakeLayer(std::move(state));
}

Layer MaxPooling2D(std::vector<int64_t> pool_size, Pooling2DOptions options) {
  auto state = NewState(Kind::kMaxPooling2D, options.name);
  state->padding = options.padding;
  state->pool = std::move(options);
  absl::Status s = SizePair(*state, "pool_size", pool_size, state->window);
  if (s.ok()) {
    s = state->pool.strides.empty()
            ? (state->strides = state->window, absl::OkStatus())
            : SizePair(*state, "strides", state->pool.strides, state->strides);
  }
  if (s.ok()) s = Padding(*state, state->padding);
  state->error = s;
  return MakeLayer(std::move(state));
}

Layer Flatten(std::string name) {
  return MakeLayer(NewState(Kind::kFlatten, std::move(name)));
}

Layer Dropout(float rate, std::string name) {
  return Dropout(rate, std::move(name), 0);
}

Layer Dropout(float rate, std::string name, uint64_t seed) {
  auto state = NewState(Kind::kDropout, std::move(name));
  state->rate = rate;
  // A drawn seed when given none: the layer's masks still follow one fixed
  // stream per layer.
  while (seed == 0) {
    seed = (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  }
  state->seed = seed;
  if (!(rate >= 0.f && rate < 1.f)) {  // NaN fails too
    state->error = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state), ": rate must be in [0, 1), got ", rate));
  }
  return MakeLayer(std::move(state));
}

Layer BatchNormalization(BatchNormalizationOptions options) {
  auto state = NewState(Kind::kBatchNormalization, options.name);
  state->batch_norm = std::move(options);
  const BatchNormalizationOptions& o = state->batch_norm;
  if (!(o.momentum >= 0.f && o.momentum <= 1.f)) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state), ": momentum must be in [0, 1], got ", o.momentum));
  } else if (!std::isfinite(o.epsilon) || !(o.epsilon > 0.f)) {
    state->error = absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(*state),
                     ": epsilon must be finite and > 0, got ", o.epsilon));
  }
  return MakeLayer(std::move(state));
}

Layer Reshape(TensorShape target_shape, std::string name) {
  auto state = NewState(Kind::kReshape, std::move(name));
  state->target_shape = target_shape;
  int unknown = 0;
  bool ok = target_shape.dims() >= 1;
  for (int i = 0; i < target_shape.dims(); ++i) {
    if (target_shape[i] == -1) {
      ++unknown;
    } else if (target_shape[i] < 1) {
      ok = false;
    }
  }
  if (!ok || unknown > 1) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state), ": target_shape ", target_shape.DebugString(),
        " must have sizes >= 1 and at most one -1 (without the batch "
        "dimension)"));
  }
  return MakeLayer(std::move(state));
}

Layer Activation(std::string activation, std::string name) {
  auto state = NewState(Kind::kActivation, std::move(name));
  state->activation = std::move(activation);
  if (!models_internal::KnownActivation(state->activation)) {
    state->error = UnknownActivation(*state, state->activation);
  }
  return MakeLayer(std::move(state));
}

}  // namespace layers

namespace models_internal {

absl::StatusOr<Variable> MakeVariable(Graph& g, const std::string& name,
                                      const TensorShape& shape,
                                      const std::string& label,
                                      bool trainable) {
  Variable v;
  v.name = name;
  v.shape = shape;
  v.trainable = trainable;
  GG_ASSIGN_OR_RETURN(Output handle,
                      ops::VarHandleOp(g, DT_FLOAT, shape, {.name = name}));
  GG_ASSIGN_OR_RETURN(Output read,
                      ops::ReadVariableOp(handle, {.name = name + "/Read"}));
  GG_ASSIGN_OR_RETURN(
      Output value,
      ops::Placeholder(g, DT_FLOAT, shape, {.name = name + "/assign_value"}));
  GG_ASSIGN_OR_RETURN(
      Output assign,
      ops::AssignVariableOp(handle, value, {.name = name + "/Assign"}));
  auto own = [&](const Output& o) {
    return Output(o.handle().WithOwner(label), o.index());
  };
  v.handle = own(handle);
  v.read = own(read);
  v.assign_value = own(value);
  v.assign = own(assign);
  return v;
}

absl::StatusOr<Tensor> GlorotUniform(const TensorShape& shape, int64_t fan_in,
                                     int64_t fan_out, uint64_t seed,
                                     const std::string& what) {
  GG_ASSIGN_OR_RETURN(Tensor t,
                      NewTensor(DT_FLOAT, shape, /*zero=*/false, what));
  std::mt19937_64 rng(seed != 0 ? seed : std::random_device{}());
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  std::uniform_real_distribution<float> u(-limit, limit);
  for (float& x : t.mutable_data<float>()) x = u(rng);
  return t;
}

absl::StatusOr<Tensor> Filled(const TensorShape& shape, float value,
                              const std::string& what) {
  GG_ASSIGN_OR_RETURN(Tensor t,
                      NewTensor(DT_FLOAT, shape, /*zero=*/true, what));
  if (value != 0.f) {
    for (float& x : t.mutable_data<float>()) x = value;
  }
  return t;
}

absl::Status AssignAll(const std::vector<Variable>& vars,
                       std::vector<Tensor> values, Session& session) {
  std::vector<std::pair<Output, Tensor>> feeds;
  std::vector<Output> targets;
  for (size_t i = 0; i < vars.size(); ++i) {
    feeds.emplace_back(vars[i].assign_value, std::move(values[i]));
    targets.push_back(vars[i].assign);
  }
  return session.Run(feeds, {}, targets).status();
}

namespace {

absl::StatusOr<TensorShape> DenseOutputShape(const LayerState& layer,
                                             const TensorShape& in) {
  if (in.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer),
                     ": takes [batch, features] inputs, (None, n), but "
                     "gets ",
                     KerasShape(in), "; put a Flatten layer before it"));
  }
  return TensorShape({layer.units});
}

}  // namespace

absl::Status BuildKernelAndBias(const KernelSpec& spec, Graph& graph,
                                const std::string& scope, Session& session,
                                std::vector<Variable>& vars) {
  const std::string label = "Layer '" + scope + "'";
  const int64_t units = spec.kernel_shape[spec.kernel_shape.dims() - 1];
  GG_ASSIGN_OR_RETURN(Variable kernel, MakeVariable(graph, scope + "/kernel",
                                                    spec.kernel_shape, label));
  vars.push_back(std::move(kernel));
  if (spec.use_bias) {
    GG_ASSIGN_OR_RETURN(Variable bias,
                        MakeVariable(graph, scope + "/bias", {units}, label));
    vars.push_back(std::move(bias));
  }
  std::vector<Tensor> init;
  GG_ASSIGN_OR_RETURN(Tensor kernel_init,
                      GlorotUniform(spec.kernel_shape, spec.fan_in,
                                    spec.fan_out, spec.seed, vars[0].name));
  init.push_back(std::move(kernel_init));
  if (vars.size() > 1) {
    GG_ASSIGN_OR_RETURN(Tensor bias_init, Filled({units}, 0.f, vars[1].name));
    init.push_back(std::move(bias_init));
  }
  return AssignAll(vars, std::move(init), session);
}

namespace {

absl::Status BuildDense(LayerState& layer, Graph& graph, const TensorShape& in,
                        const std::string& scope, Session& session,
                        std::vector<Variable>& vars) {
  return BuildKernelAndBias({.kernel_shape = {in[0], layer.units},
                             .fan_in = in[0],
                             .fan_out = layer.units,
                             .use_bias = layer.dense.use_bias,
                             .seed = layer.dense.seed},
                            graph, scope, session, vars);
}

absl::StatusOr<LayerOutputs> ApplyDense(const LayerState& layer,
                                        const BuiltLayer& built,
                                        const Output& x) {
  const std::string& scope = built.name();
  GG_ASSIGN_OR_RETURN(Output y, ops::MatMul(x, built.variables[0].read,
                                            {.name = scope + "/MatMul"}));
  if (layer.dense.use_bias) {
    GG_ASSIGN_OR_RETURN(y, ops::BiasAdd(y, built.variables[1].read,
                                        {.name = scope + "/BiasAdd"}));
  }
  LayerOutputs out{.pre_activation = y, .output = y};
  GG_ASSIGN_OR_RETURN(out.output, ApplyActivation(layer.activation, y, scope));
  out.softmax = layer.activation == "softmax";
  return out;
}

// The largest tensor an unbuilt layer's build allocates, checked before
// anything is: Dense's and Conv2D's kernels (a bias is no larger).
absl::Status CheckWeightSizes(const LayerState& layer, const TensorShape& in) {
  if (layer.kind == Kind::kDense) {
    return CheckFits(
        DT_FLOAT, {in[0], layer.units}, 1,
        absl::StrCat(LayerLabel(layer), " of ", layer.units, " units on ",
                     in[0], " features, its kernel"));
  }
  if (layer.kind == Kind::kConv2D) {
    return CheckFits(
        DT_FLOAT, {layer.window[0], layer.window[1], in[2], layer.units}, 1,
        absl::StrCat(LayerLabel(layer), " of ", layer.units, " filters on ",
                     in[2], " channels, its kernel"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TensorShape> OutputShape(const LayerState& layer,
                                        const TensorShape& in) {
  switch (layer.kind) {
    case Kind::kInput:
      return layer.input_shape;
    case Kind::kDense:
      return DenseOutputShape(layer, in);
    case Kind::kConv2D:
      return Conv2DOutputShape(layer, in);
    case Kind::kMaxPooling2D:
      return MaxPooling2DOutputShape(layer, in);
    case Kind::kBatchNormalization:
      return BatchNormalizationOutputShape(layer, in);
    case Kind::kFlatten:
    case Kind::kReshape:
      return ReshapeOutputShape(layer, in);
    case Kind::kDropout:
    case Kind::kActivation:
      return in;
  }
  return absl::InternalError("unknown layer kind");
}

absl::StatusOr<TensorShape> CheckLayer(LayerState& layer, Graph& graph,
                                       const TensorShape& in) {
  GG_RETURN_IF_ERROR(layer.error);
  GG_ASSIGN_OR_RETURN(TensorShape out, OutputShape(layer, in));
  const BuiltLayer* built = layer.built();
  if (built == nullptr) {
    GG_RETURN_IF_ERROR(CheckWeightSizes(layer, in));
    return out;
  }
  const std::string& name = built->name();
  if (built->graph != &graph) {
    return absl::InvalidArgumentError(
        absl::StrCat("layer '", name, "' belongs to another graph"));
  }
  if (layer.kind != Kind::kInput && built->shape != in) {
    if (layer.kind == Kind::kDense) {
      return absl::InvalidArgumentError(
          absl::StrCat("layer '", name, "' was built for ", built->shape[0],
                       " input features but gets ", in[0]));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("layer '", name, "' was built for inputs ",
                     KerasShape(built->shape), " but gets ", KerasShape(in)));
  }
  return out;
}

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
  switch (layer.kind) {
    case Kind::kInput: {
      std::vector<int64_t> dims = {-1};
      for (int i = 0; i < layer.input_shape.dims(); ++i) {
        dims.push_back(layer.input_shape[i]);
      }
      GG_ASSIGN_OR_RETURN(Output x, ops::Placeholder(graph, DT_FLOAT, dims,
                                                     {.name = scope.name()}));
      built->placeholder = Output(x.handle().WithOwner(label), x.index());
      break;
    }
    case Kind::kDense:
      GG_RETURN_IF_ERROR(
          BuildDense(layer, graph, in, scope.name(), session, vars));
      break;
    case Kind::kConv2D:
      GG_RETURN_IF_ERROR(
          BuildConv2D(layer, graph, in, scope.name(), session, vars));
      break;
    case Kind::kBatchNormalization:
      GG_RETURN_IF_ERROR(
          BuildBatchNormalization(graph, in, scope.name(), session, vars));
      break;
    default:
      break;  // no variables
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
  return (layer.kind == Kind::kDropout && layer.rate > 0.f) ||
         layer.kind == Kind::kBatchNormalization;
}

absl::StatusOr<LayerOutputs> ApplyLayer(const LayerState& layer,
                                        const Output& x, bool training) {
  const BuiltLayer* built = layer.built();
  if (built == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(LayerLabel(layer), " is not built"));
  }
  const std::string& scope = built->name();
  switch (layer.kind) {
    case Kind::kDense:
      return ApplyDense(layer, *built, x);
    case Kind::kConv2D:
      return ApplyConv2D(layer, *built, x);
    case Kind::kMaxPooling2D:
      return ApplyMaxPooling2D(layer, *built, x);
    case Kind::kBatchNormalization:
      return ApplyBatchNormalization(layer, *built, x, training);
    case Kind::kDropout:
      return ApplyDropout(layer, *built, x, training);
    case Kind::kFlatten:
    case Kind::kReshape: {
      GG_ASSIGN_OR_RETURN(TensorShape out, OutputShape(layer, built->shape));
      return ApplyReshape(*built, x, out);
    }
    case Kind::kActivation: {
      LayerOutputs out{.pre_activation = x, .output = x};
      GG_ASSIGN_OR_RETURN(out.output,
                          ApplyActivation(layer.activation, x, scope));
      out.softmax = layer.activation == "softmax";
      return out;
    }
    case Kind::kInput:
      break;
  }
  return absl::InternalError(
      absl::StrCat("layer '", scope, "' has no forward nodes"));
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

}  // namespace models_internal
}  // namespace graphgc
