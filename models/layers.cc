// The Layer handle and what every layer kind shares: names, labels,
// variables, initialisers, activations, option checks and the generic
// layers:: entry points over the registry. Each kind (its builder, config
// codec, weights and forward nodes) is in models/layers/<kind>.cc; the
// per-kind dispatch is in models/layer_registry.cc.
#include "models/layers.h"

#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/layer_registry.h"
#include "models/random_seed.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {

using models_internal::LayerConfig;
using models_internal::LayerKind;
using models_internal::LayerState;

namespace models_internal {

std::string LayerLabel(const LayerState& layer) {
  const std::string kind =
      !layer.kind->label.empty() ? layer.kind->label : KindName(layer.kind);
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
  if (state_ == nullptr || state_->kind->units == nullptr) return 0;
  return state_->kind->units(*state_);
}

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
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  return RandomUniform(shape, -limit, limit, seed, what);
}

absl::StatusOr<Tensor> RandomUniform(const TensorShape& shape, float minval,
                                     float maxval, uint64_t seed,
                                     const std::string& what) {
  GG_ASSIGN_OR_RETURN(Tensor t,
                      NewTensor(DT_FLOAT, shape, /*zero=*/false, what));
  std::mt19937_64 rng(seed != 0 ? seed : DrawSeed());
  std::uniform_real_distribution<float> u(minval, maxval);
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

std::shared_ptr<LayerState> NewLayerState(const LayerKind& kind,
                                          std::string name,
                                          std::unique_ptr<LayerConfig> config) {
  auto state = std::make_shared<LayerState>();
  state->kind = &kind;
  state->requested_name = std::move(name);
  state->config = std::move(config);
  return state;
}

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

absl::Status CheckPadding(const LayerState& layer, const std::string& padding) {
  if (padding == "valid" || padding == "same") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(LayerLabel(layer),
                   ": padding must be \"valid\" or \"same\", "
                   "got \"",
                   padding, "\""));
}

namespace {

// One spatial output size of a window of `k` at `stride` over `in`, as
// TensorFlow computes it: SAME ceil(in / stride), VALID ceil((in - k + 1) /
// stride), which needs k <= in. Written so that nothing can overflow.
absl::StatusOr<int64_t> SpatialSize(const LayerState& layer,
                                    const TensorShape& in, int axis,
                                    const std::vector<int64_t>& window,
                                    const std::vector<int64_t>& strides,
                                    const std::string& padding,
                                    const std::string& window_name) {
  const int64_t size = in[axis];
  const int64_t k = window[axis];
  const int64_t stride = strides[axis];
  if (padding == "same") return (size - 1) / stride + 1;
  if (k > size) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": its ", window[0], "x", window[1], " ",
        window_name, " does not fit inputs ", KerasShape(in),
        " with padding \"valid\" (use smaller windows, larger inputs or "
        "padding \"same\")"));
  }
  return (size - k) / stride + 1;
}

}  // namespace

absl::StatusOr<TensorShape> WindowOutputShape(
    const LayerState& layer, const TensorShape& in,
    const std::vector<int64_t>& window, const std::vector<int64_t>& strides,
    const std::string& padding, const std::string& window_name,
    int64_t channels) {
  if (in.dims() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer),
        ": takes NHWC images [batch, height, width, channels], (None, h, w, "
        "c), but gets ",
        KerasShape(in)));
  }
  GG_ASSIGN_OR_RETURN(int64_t h, SpatialSize(layer, in, 0, window, strides,
                                             padding, window_name));
  GG_ASSIGN_OR_RETURN(int64_t w, SpatialSize(layer, in, 1, window, strides,
                                             padding, window_name));
  return TensorShape({h, w, channels});
}

std::vector<int64_t> Nhwc(const std::vector<int64_t>& hw) {
  return {1, hw[0], hw[1], 1};
}

absl::StatusOr<LayerOutputs> ApplyReshape(const BuiltLayer& built,
                                          const Output& x,
                                          const TensorShape& out) {
  std::vector<int64_t> dims = {-1};
  for (int i = 0; i < out.dims(); ++i) dims.push_back(out[i]);
  GG_ASSIGN_OR_RETURN(
      Output y, ops::Reshape(x, dims, {.name = built.name() + "/Reshape"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

absl::StatusOr<LayerOutputs> ActivationOutputs(const std::string& activation,
                                               const Output& y,
                                               const std::string& scope) {
  LayerOutputs out{.pre_activation = y, .output = y};
  GG_ASSIGN_OR_RETURN(out.output, ApplyActivation(activation, y, scope));
  out.softmax = activation == "softmax";
  return out;
}

}  // namespace models_internal

namespace layers {

absl::StatusOr<Layer> FromConfig(const std::string& class_name,
                                 const std::string& config_json) {
  using models_internal::ConfigObject;
  using models_internal::Json;
  const models_internal::LayerKind* kind =
      models_internal::FindLayerKind(class_name);
  const std::string where = absl::StrCat(class_name, " config");
  if (kind == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown layer class '", class_name,
                     "' (known: ", models_internal::KnownKinds(), ")"));
  }
  // Bounded by the caller's text; nesting cannot go deep in a config the
  // readers accept, and a parse error is a status, not an exception.
  Json config = Json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not a JSON object"));
  }
  return kind->read_config(ConfigObject(config, where));
}

std::vector<LayerKindInfo> RegisteredKinds() {
  std::vector<LayerKindInfo> out;
  for (const models_internal::LayerKind* kind : models_internal::LayerKinds()) {
    LayerKindInfo info{.class_name = kind->class_name,
                       .default_name = kind->default_name};
    for (const models_internal::ConfigField& f : kind->fields) {
      info.fields.push_back(
          {.name = f.name, .python = f.python, .default_json = f.default_json});
    }
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace layers
}  // namespace graphgc
