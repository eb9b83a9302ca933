// LayerNormalization (Keras 3's keras.layers.LayerNormalization): each
// sample normalised over its last axis, (x - mean) / sqrt(variance +
// epsilon), then scaled by gamma and shifted by beta (rms_scaling: x /
// sqrt(variance + epsilon) * gamma). Built from Mean, Sub, Square, Sqrt,
// RealDiv, Mul and AddV2, whose gradients ops/ has. Weights in Keras's
// order: gamma (scale or rms_scaling), then beta (center without
// rms_scaling), both of the last axis's size.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/layer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct LayerNormalizationConfig : LayerConfig {
  std::vector<int64_t> axis = {-1};
  float epsilon = 1e-3f;
  bool center = true;
  bool scale = true;
  bool rms_scaling = false;
};

const LayerNormalizationConfig& Config(const LayerState& layer) {
  return ConfigOf<LayerNormalizationConfig>(layer);
}

bool HasGamma(const LayerNormalizationConfig& c) {
  return c.scale || c.rms_scaling;
}
bool HasBeta(const LayerNormalizationConfig& c) {
  return c.center && !c.rms_scaling;
}

const LayerKind& LayerNormalizationKind();

Layer MakeLayerNormalization(LayerNormalizationConfig given, std::string name) {
  auto config = std::make_unique<LayerNormalizationConfig>(std::move(given));
  const LayerNormalizationConfig& c = *config;
  auto state = NewLayerState(LayerNormalizationKind(), std::move(name),
                             std::move(config));
  if (!std::isfinite(c.epsilon) || !(c.epsilon > 0.f)) {
    state->error = absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(*state),
                     ": epsilon must be finite and > 0, got ", c.epsilon));
  } else if (c.axis.size() != 1) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state), ": axis [", absl::StrJoin(c.axis, ", "),
        "] is not supported: graphgc normalises over the last axis only "
        "(axis=-1)"));
  }
  return MakeLayer(std::move(state));
}

Json WriteLayerNormalizationConfig(const LayerState& layer,
                                   const std::string& name) {
  const LayerNormalizationConfig& o = Config(layer);
  Json c = CommonConfig(name);
  // A built Keras 3 layer holds its axis as a list.
  c["axis"] = o.axis;
  c["epsilon"] = FloatJson(o.epsilon);
  c["center"] = o.center;
  c["scale"] = o.scale;
  c["rms_scaling"] = o.rms_scaling;
  c["beta_initializer"] = InitializerJson("Zeros");
  c["gamma_initializer"] = InitializerJson("Ones");
  for (const char* k : {"beta_regularizer", "gamma_regularizer",
                        "beta_constraint", "gamma_constraint"}) {
    c[k] = nullptr;
  }
  return c;
}

// An initializer field: absent, null, Keras's name `short_name` ("zeros")
// or an object of class `class_name` ("Zeros"); others are refused.
absl::Status OnlyInitializer(const ConfigObject& config, const char* key,
                             const char* short_name, const char* class_name) {
  const Json* j = config.Find(key);
  if (j == nullptr || j->is_null()) return absl::OkStatus();
  if (j->is_string() && *j == short_name) return absl::OkStatus();
  if (j->is_object()) {
    auto it = j->find("class_name");
    if (it != j->end() && *it == class_name) return absl::OkStatus();
  }
  return config.Error(absl::StrCat("'", key, "' must be \"", short_name,
                                   "\" (graphgc implements no other ", key,
                                   "), got ", Shown(*j)));
}

absl::StatusOr<Layer> ReadLayerNormalizationConfig(const ConfigObject& config) {
  LayerNormalizationConfig c;
  GG_ASSIGN_OR_RETURN(c.axis, config.IntList("axis", std::vector<int64_t>{-1},
                                             /*scalar_ok=*/true));
  GG_ASSIGN_OR_RETURN(c.epsilon, config.Float("epsilon", 1e-3f));
  GG_ASSIGN_OR_RETURN(c.center, config.Bool("center", true));
  GG_ASSIGN_OR_RETURN(c.scale, config.Bool("scale", true));
  GG_ASSIGN_OR_RETURN(c.rms_scaling, config.Bool("rms_scaling", false));
  GG_RETURN_IF_ERROR(
      OnlyInitializer(config, "beta_initializer", "zeros", "Zeros"));
  GG_RETURN_IF_ERROR(
      OnlyInitializer(config, "gamma_initializer", "ones", "Ones"));
  for (const char* k : {"beta_regularizer", "gamma_regularizer",
                        "beta_constraint", "gamma_constraint"}) {
    GG_RETURN_IF_ERROR(config.Only(k, nullptr));
  }
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return MakeLayerNormalization(std::move(c), std::move(name));
}

// Per-sample inputs of any rank >= 1; the axis must be the last one (-1,
// or its index counting the batch).
absl::StatusOr<TensorShape> LayerNormalizationOutputShape(
    const LayerState& layer, const TensorShape& in) {
  const int64_t axis = Config(layer).axis[0];
  const int64_t rank = in.dims() + 1;
  if (in.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer), ": takes inputs of rank >= 2, gets ",
                     KerasShape(in)));
  }
  if (axis >= rank || axis < -rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer), ": Axis ", axis,
                     " is out of bounds for input shape ", KerasShape(in),
                     ". Ensure axis is within the range of input dimensions."));
  }
  if (axis != -1 && axis != rank - 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": axis ", axis, " of input shape ", KerasShape(in),
        " is not supported: graphgc normalises over the last axis only "
        "(axis=-1)"));
  }
  return in;
}

std::vector<WeightSpec> LayerNormalizationWeights(const LayerState& layer,
                                                  const TensorShape& in) {
  if (in.dims() == 0) return {};
  const LayerNormalizationConfig& c = Config(layer);
  const TensorShape shape = {in[in.dims() - 1]};
  std::vector<WeightSpec> out;
  if (HasGamma(c)) {
    out.push_back(
        {.name = "gamma", .shape = shape, .init = Initializer::kOnes});
  }
  if (HasBeta(c)) {
    out.push_back(
        {.name = "beta", .shape = shape, .init = Initializer::kZeros});
  }
  return out;
}

absl::StatusOr<LayerOutputs> ApplyLayerNormalization(const LayerState& layer,
                                                     const BuiltLayer& built,
                                                     const Output& x, bool) {
  const LayerNormalizationConfig& c = Config(layer);
  const std::string& scope = built.name();
  const std::vector<Variable>& v = built.variables;
  const ops::ReduceOptions last = {.axes = {-1}, .keep_dims = true};
  ops::ReduceOptions o = last;
  o.name = scope + "/Mean";
  GG_ASSIGN_OR_RETURN(Output mean, ops::Mean(x, o));
  GG_ASSIGN_OR_RETURN(Output centred,
                      ops::Sub(x, mean, {.name = scope + "/Sub"}));
  GG_ASSIGN_OR_RETURN(Output squares,
                      ops::Square(centred, {.name = scope + "/Square"}));
  o.name = scope + "/Mean_1";
  GG_ASSIGN_OR_RETURN(Output variance, ops::Mean(squares, o));
  GG_ASSIGN_OR_RETURN(
      Output eps, ops::ScalarLike(x, c.epsilon, {.name = scope + "/epsilon"}));
  GG_ASSIGN_OR_RETURN(Output shifted,
                      ops::AddV2(variance, eps, {.name = scope + "/add"}));
  GG_ASSIGN_OR_RETURN(Output stddev,
                      ops::Sqrt(shifted, {.name = scope + "/Sqrt"}));
  GG_ASSIGN_OR_RETURN(Output y,
                      ops::RealDiv(c.rms_scaling ? x : centred, stddev,
                                   {.name = scope + "/truediv"}));
  size_t next = 0;
  if (HasGamma(c)) {
    GG_ASSIGN_OR_RETURN(y,
                        ops::Mul(y, v[next++].read, {.name = scope + "/mul"}));
  }
  if (HasBeta(c)) {
    GG_ASSIGN_OR_RETURN(
        y, ops::AddV2(y, v[next++].read, {.name = scope + "/add_1"}));
  }
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& LayerNormalizationKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "LayerNormalization",
      .default_name = "layer_normalization",
      .weights_group = "layer_normalization",
      .fields = {{"axis", "axis", "-1"},
                 {"epsilon", "float", "0.001"},
                 {"center", "bool", "true"},
                 {"scale", "bool", "true"},
                 {"rms_scaling", "bool", "false"},
                 {"beta_initializer", "str", "\"zeros\""},
                 {"gamma_initializer", "str", "\"ones\""},
                 {"name", "name", "null"}},
      .write_config = WriteLayerNormalizationConfig,
      .read_config = ReadLayerNormalizationConfig,
      .output_shape = LayerNormalizationOutputShape,
      .weights = LayerNormalizationWeights,
      .apply = ApplyLayerNormalization,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(LayerNormalizationKind);
}  // namespace models_internal
}  // namespace graphgc
