// ELU (Keras 3's keras.layers.ELU): x for x > 0, alpha * (exp(x) - 1)
// below; no variables. Keras 3's ELU leaves alpha out of its config; it is
// written here so a saved model reads back with its alpha (Keras's ELU takes
// the field as its constructor argument).
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct ELUConfig : LayerConfig {
  float alpha = 1.f;
};

float Alpha(const LayerState& layer) {
  return ConfigOf<ELUConfig>(layer).alpha;
}

const LayerKind& ELUKind();

Json WriteELUConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["alpha"] = FloatJson(Alpha(layer));
  return c;
}

absl::StatusOr<Layer> ReadELUConfig(const ConfigObject& config) {
  auto c = std::make_unique<ELUConfig>();
  GG_ASSIGN_OR_RETURN(c->alpha, config.Float("alpha", 1.f));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  const float alpha = c->alpha;
  auto state = NewLayerState(ELUKind(), std::move(name), std::move(c));
  if (!std::isfinite(alpha)) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state), ": alpha must be a finite float, got ", alpha));
  }
  return MakeLayer(std::move(state));
}

absl::StatusOr<LayerOutputs> ApplyELU(const LayerState& layer,
                                      const BuiltLayer& built, const Output& x,
                                      bool) {
  GG_ASSIGN_OR_RETURN(Output y, EluActivation(x, Alpha(layer), built.name()));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& ELUKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "ELU",
      .default_name = "elu",
      .weights_group = "elu",
      .fields = {{"alpha", "float", "1.0"}, {"name", "name", "null"}},
      .write_config = WriteELUConfig,
      .read_config = ReadELUConfig,
      .apply = ApplyELU,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(ELUKind);
}  // namespace models_internal
}  // namespace graphgc
