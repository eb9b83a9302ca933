#include "models/layers.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "models/layer_state.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {

using models_internal::LayerState;

namespace models_internal {
std::string DenseLabel(const LayerState& layer) {
  return layer.requested_name.empty()
             ? std::string("Dense")
             : absl::StrCat("Dense '", layer.requested_name, "'");
}
}  // namespace models_internal

Layer MakeLayer(std::shared_ptr<LayerState> state) {
  return Layer(std::move(state));
}

std::string Layer::kind() const {
  if (state_ == nullptr) return "";
  return state_->kind == LayerState::Kind::kInput ? "InputLayer" : "Dense";
}

std::string Layer::name() const {
  if (state_ == nullptr) return "";
  std::lock_guard<std::mutex> l(state_->mu);
  return state_->built ? state_->scope.name() : state_->requested_name;
}

bool Layer::built() const {
  if (state_ == nullptr) return false;
  std::lock_guard<std::mutex> l(state_->mu);
  return state_->built;
}

int64_t Layer::units() const {
  if (state_ == nullptr) return 0;
  return state_->kind == LayerState::Kind::kInput
             ? (state_->input_shape.dims() == 1 ? state_->input_shape[0] : -1)
             : state_->units;
}

namespace layers {

Layer Input(TensorShape shape, std::string name) {
  auto state = std::make_shared<LayerState>();
  state->kind = LayerState::Kind::kInput;
  state->requested_name = std::move(name);
  state->input_shape = shape;
  if (shape.dims() != 1 || shape[0] < 1) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        "Input", state->requested_name.empty() ? "" : " '",
        state->requested_name, state->requested_name.empty() ? "" : "'",
        ": shape ", shape.DebugString(),
        " is not supported; give one known feature count, e.g. Input({10})"));
  }
  return MakeLayer(std::move(state));
}

Layer Dense(int64_t units, DenseOptions options) {
  auto state = std::make_shared<LayerState>();
  state->kind = LayerState::Kind::kDense;
  state->requested_name = options.name;
  state->units = units;
  state->dense = std::move(options);
  const std::string& act = state->dense.activation;
  const std::string label = models_internal::DenseLabel(*state);
  if (units < 1) {
    state->error = absl::InvalidArgumentError(
        absl::StrCat(label, ": units must be >= 1, got ", units));
  } else if (act != "linear" && act != "relu" && act != "sigmoid" &&
             act != "tanh" && act != "softmax" && !act.empty()) {
    state->error = absl::InvalidArgumentError(
        absl::StrCat(label, ": unknown activation '", act,
                     "' (use linear, relu, sigmoid, tanh or softmax)"));
  }
  return MakeLayer(std::move(state));
}

}  // namespace layers

namespace models_internal {
namespace {

// Creates a variable with its read, and the placeholder + assign pair that
// SetWeights and initialisation use. All handles carry `label`.
absl::StatusOr<Variable> MakeVariable(Graph& g, const std::string& name,
                                      const TensorShape& shape,
                                      const std::string& label) {
  Variable v;
  v.name = name;
  v.shape = shape;
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

// Keras' glorot_uniform: U(-limit, limit), limit = sqrt(6 / (fan_in +
// fan_out)).
// CheckLayer bounded fan_in x fan_out, so their sum cannot overflow.
absl::StatusOr<Tensor> GlorotUniform(int64_t fan_in, int64_t fan_out,
                                     uint64_t seed, const std::string& what) {
  GG_ASSIGN_OR_RETURN(
      Tensor t, NewTensor(DT_FLOAT, {fan_in, fan_out}, /*zero=*/false, what));
  std::mt19937_64 rng(seed != 0 ? seed : std::random_device{}());
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  std::uniform_real_distribution<float> u(-limit, limit);
  for (float& x : t.mutable_data<float>()) x = u(rng);
  return t;
}

}  // namespace

absl::Status CheckLayer(LayerState& layer, Graph& graph, int64_t input_dim) {
  GG_RETURN_IF_ERROR(layer.error);
  std::lock_guard<std::mutex> l(layer.mu);
  if (!layer.built) {
    if (layer.kind != LayerState::Kind::kDense) return absl::OkStatus();
    // The kernel is the largest tensor the build allocates (the bias has
    // `units` elements, which the kernel has too).
    return CheckFits(
        DT_FLOAT, {input_dim, layer.units}, 1,
        absl::StrCat(DenseLabel(layer), " of ", layer.units, " units on ",
                     input_dim, " features, its kernel"));
  }
  const std::string name = layer.scope.name();
  if (layer.graph != &graph) {
    return absl::InvalidArgumentError(
        absl::StrCat("layer '", name, "' belongs to another graph"));
  }
  if (layer.kind == LayerState::Kind::kDense && layer.input_dim != input_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("layer '", name, "' was built for ", layer.input_dim,
                     " input features but gets ", input_dim));
  }
  return absl::OkStatus();
}

absl::Status BuildLayer(LayerState& layer, Graph& graph, int64_t input_dim,
                        Session& session) {
  GG_RETURN_IF_ERROR(CheckLayer(layer, graph, input_dim));
  std::lock_guard<std::mutex> l(layer.mu);
  if (layer.built) return absl::OkStatus();
  const bool is_input = layer.kind == LayerState::Kind::kInput;
  ScopeReservation scope = graph.ReserveScope(
      !layer.requested_name.empty() ? layer.requested_name
                                    : (is_input ? "input" : "dense"));
  const std::string label = "Layer '" + scope.name() + "'";
  if (is_input) {
    GG_ASSIGN_OR_RETURN(
        Output x, ops::Placeholder(graph, DT_FLOAT, {-1, layer.input_shape[0]},
                                   {.name = scope.name()}));
    layer.placeholder = Output(x.handle().WithOwner(label), x.index());
  } else {
    std::vector<Variable> vars;
    GG_ASSIGN_OR_RETURN(Variable kernel,
                        MakeVariable(graph, scope.name() + "/kernel",
                                     {input_dim, layer.units}, label));
    vars.push_back(std::move(kernel));
    if (layer.dense.use_bias) {
      GG_ASSIGN_OR_RETURN(
          Variable bias,
          MakeVariable(graph, scope.name() + "/bias", {layer.units}, label));
      vars.push_back(std::move(bias));
    }
    // Initialise: kernel glorot_uniform, bias zeros, in one run.
    std::vector<std::pair<Output, Tensor>> feeds;
    std::vector<Output> targets;
    GG_ASSIGN_OR_RETURN(
        Tensor kernel_init,
        GlorotUniform(input_dim, layer.units, layer.dense.seed, vars[0].name));
    feeds.emplace_back(vars[0].assign_value, std::move(kernel_init));
    targets.push_back(vars[0].assign);
    if (vars.size() > 1) {
      GG_ASSIGN_OR_RETURN(
          Tensor bias_init,
          NewTensor(DT_FLOAT, {layer.units}, /*zero=*/true, vars[1].name));
      feeds.emplace_back(vars[1].assign_value, std::move(bias_init));
      targets.push_back(vars[1].assign);
    }
    GG_RETURN_IF_ERROR(session.Run(feeds, {}, targets).status());
    layer.variables = std::move(vars);
    layer.input_dim = input_dim;
  }
  layer.graph = &graph;
  layer.scope = std::move(scope);
  layer.built = true;
  return absl::OkStatus();
}

absl::StatusOr<DenseOutputs> ApplyDense(LayerState& layer, const Output& x) {
  std::lock_guard<std::mutex> l(layer.mu);
  const std::string& scope = layer.scope.name();
  GG_ASSIGN_OR_RETURN(Output y, ops::MatMul(x, layer.variables[0].read,
                                            {.name = scope + "/MatMul"}));
  if (layer.dense.use_bias) {
    GG_ASSIGN_OR_RETURN(y, ops::BiasAdd(y, layer.variables[1].read,
                                        {.name = scope + "/BiasAdd"}));
  }
  DenseOutputs out{.pre_activation = y, .output = y};
  const std::string& act = layer.dense.activation;
  if (act == "relu") {
    GG_ASSIGN_OR_RETURN(out.output, ops::Relu(y, {.name = scope + "/Relu"}));
  } else if (act == "sigmoid") {
    GG_ASSIGN_OR_RETURN(out.output,
                        ops::Sigmoid(y, {.name = scope + "/Sigmoid"}));
  } else if (act == "tanh") {
    GG_ASSIGN_OR_RETURN(out.output, ops::Tanh(y, {.name = scope + "/Tanh"}));
  } else if (act == "softmax") {
    GG_ASSIGN_OR_RETURN(out.output,
                        ops::Softmax(y, {.name = scope + "/Softmax"}));
  }
  return out;
}

}  // namespace models_internal
}  // namespace graphgc
