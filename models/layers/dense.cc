// Dense: activation(x @ kernel + bias) on [batch, features] inputs
// (MatMul, BiasAdd and the activation's op); kernel glorot_uniform, bias
// zeros.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct DenseConfig : LayerConfig {
  int64_t units = 0;
  DenseOptions options;
};

const DenseConfig& Config(const LayerState& layer) {
  return ConfigOf<DenseConfig>(layer);
}

Json WriteDenseConfig(const LayerState& layer, const std::string& name) {
  const DenseConfig& c = Config(layer);
  return {
      {"name", name},
      {"trainable", true},
      {"dtype", "float32"},
      {"units", c.units},
      {"activation", ActivationName(c.options.activation)},
      {"use_bias", c.options.use_bias},
      {"kernel_initializer",
       KerasObject("keras.initializers", "GlorotUniform", {{"seed", nullptr}})},
      {"bias_initializer",
       KerasObject("keras.initializers", "Zeros", Json::object())},
      {"kernel_regularizer", nullptr},
      {"bias_regularizer", nullptr},
      {"kernel_constraint", nullptr},
      {"bias_constraint", nullptr},
  };
}

absl::StatusOr<Layer> ReadDenseConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(const int64_t units, config.Int("units"));
  GG_ASSIGN_OR_RETURN(std::string activation,
                      config.String("activation", "linear"));
  GG_ASSIGN_OR_RETURN(const bool use_bias, config.Bool("use_bias", true));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  // Not in Keras's config (its seed is the initializer's): the builder's.
  GG_ASSIGN_OR_RETURN(const uint64_t seed, config.Seed("seed"));
  return layers::Dense(units, {.activation = std::move(activation),
                               .use_bias = use_bias,
                               .name = std::move(name),
                               .seed = seed});
}

absl::StatusOr<TensorShape> DenseOutputShape(const LayerState& layer,
                                             const TensorShape& in) {
  if (in.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer),
                     ": takes [batch, features] inputs, (None, n), but "
                     "gets ",
                     KerasShape(in), "; put a Flatten layer before it"));
  }
  return TensorShape({Config(layer).units});
}

std::vector<WeightSpec> DenseWeights(const LayerState& layer,
                                     const TensorShape& in) {
  const DenseConfig& c = Config(layer);
  std::vector<WeightSpec> out = {{.name = "kernel",
                                  .shape = {in[0], c.units},
                                  .init = Initializer::kGlorotUniform,
                                  .fan_in = in[0],
                                  .fan_out = c.units,
                                  .seed = c.options.seed}};
  if (c.options.use_bias) out.push_back({.name = "bias", .shape = {c.units}});
  return out;
}

absl::Status CheckDenseWeights(const LayerState& layer, const TensorShape& in) {
  const int64_t units = Config(layer).units;
  return CheckFits(DT_FLOAT, {in[0], units}, 1,
                   absl::StrCat(LayerLabel(layer), " of ", units, " units on ",
                                in[0], " features, its kernel"));
}

std::string DenseRebuilt(const std::string& name, const TensorShape& built,
                         const TensorShape& in) {
  return absl::StrCat("layer '", name, "' was built for ", built[0],
                      " input features but gets ", in[0]);
}

absl::StatusOr<LayerOutputs> ApplyDense(const LayerState& layer,
                                        const BuiltLayer& built,
                                        const Output& x, bool) {
  const DenseConfig& c = Config(layer);
  const std::string& scope = built.name();
  GG_ASSIGN_OR_RETURN(Output y, ops::MatMul(x, built.variables[0].read,
                                            {.name = scope + "/MatMul"}));
  if (c.options.use_bias) {
    GG_ASSIGN_OR_RETURN(y, ops::BiasAdd(y, built.variables[1].read,
                                        {.name = scope + "/BiasAdd"}));
  }
  return ActivationOutputs(c.options.activation, y, scope);
}

int64_t DenseUnits(const LayerState& layer) { return Config(layer).units; }

const LayerKind& DenseKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Dense",
      .default_name = "dense",
      .order = 1,
      .weights_group = "dense",
      .fields = {{"units", "int32", ""},
                 {"activation", "activation", "null"},
                 {"use_bias", "bool", "true"},
                 {"name", "name", "null"},
                 {"seed", "seed", "null"}},
      .write_config = WriteDenseConfig,
      .read_config = ReadDenseConfig,
      .output_shape = DenseOutputShape,
      .weights = DenseWeights,
      .check_weights = CheckDenseWeights,
      .rebuilt_message = DenseRebuilt,
      .apply = ApplyDense,
      .units = DenseUnits,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(DenseKind);
}  // namespace models_internal

namespace layers {

Layer Dense(int64_t units, DenseOptions options) {
  using models_internal::DenseConfig;
  auto config = std::make_unique<DenseConfig>();
  config->units = units;
  config->options = std::move(options);
  const DenseConfig& c = *config;
  auto state = models_internal::NewLayerState(
      models_internal::DenseKind(), c.options.name, std::move(config));
  const std::string label = models_internal::LayerLabel(*state);
  if (units < 1) {
    state->error = absl::InvalidArgumentError(
        absl::StrCat(label, ": units must be >= 1, got ", units));
  } else if (!models_internal::KnownActivation(c.options.activation)) {
    state->error =
        models_internal::UnknownActivation(*state, c.options.activation);
  }
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
