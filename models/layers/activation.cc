// Activation: applies an activation (linear, relu, sigmoid, tanh, softmax)
// by name; no variables.
#include <string>

#include "models/layer_registry.h"
#include "models/layers.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct ActivationConfig : LayerConfig {
  std::string activation;
};

const ActivationConfig& Config(const LayerState& layer) {
  return ConfigOf<ActivationConfig>(layer);
}

Json WriteActivationConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["activation"] = ActivationName(Config(layer).activation);
  return c;
}

absl::StatusOr<Layer> ReadActivationConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(std::string activation, config.String("activation"));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return layers::Activation(std::move(activation), std::move(name));
}

absl::StatusOr<LayerOutputs> ApplyActivationLayer(const LayerState& layer,
                                                  const BuiltLayer& built,
                                                  const Output& x, bool) {
  return ActivationOutputs(Config(layer).activation, x, built.name());
}

const LayerKind& ActivationKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Activation",
      .default_name = "activation",
      .order = 8,
      .weights_group = "activation",
      .fields = {{"activation", "activation", ""}, {"name", "name", "null"}},
      .write_config = WriteActivationConfig,
      .read_config = ReadActivationConfig,
      .apply = ApplyActivationLayer,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(ActivationKind);
}  // namespace models_internal

namespace layers {

Layer Activation(std::string activation, std::string name) {
  auto config = std::make_unique<models_internal::ActivationConfig>();
  config->activation = std::move(activation);
  const std::string& act = config->activation;
  auto state = models_internal::NewLayerState(
      models_internal::ActivationKind(), std::move(name), std::move(config));
  if (!models_internal::KnownActivation(act)) {
    state->error = models_internal::UnknownActivation(*state, act);
  }
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
