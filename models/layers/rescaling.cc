// Rescaling (Keras 3's keras.layers.Rescaling): x * scale + offset, in
// training and inference; no variables. scale and offset are numbers
// (Keras also takes per-channel arrays, which are refused).
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct RescalingConfig : LayerConfig {
  float scale = 1.f;
  float offset = 0.f;
};

const RescalingConfig& Config(const LayerState& layer) {
  return ConfigOf<RescalingConfig>(layer);
}

const LayerKind& RescalingKind();

Json WriteRescalingConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["scale"] = FloatJson(Config(layer).scale);
  c["offset"] = FloatJson(Config(layer).offset);
  return c;
}

absl::StatusOr<Layer> ReadRescalingConfig(const ConfigObject& config) {
  auto c = std::make_unique<RescalingConfig>();
  const Json* scale = config.Find("scale");
  if (scale == nullptr || scale->is_null()) return config.Missing("scale");
  for (const char* key : {"scale", "offset"}) {
    const Json* j = config.Find(key);
    if (j != nullptr && !j->is_null() && !j->is_number()) {
      return config.WrongType(key, "a number (graphgc takes no arrays)", *j);
    }
  }
  GG_ASSIGN_OR_RETURN(c->scale, config.Float("scale", 1.f));
  GG_ASSIGN_OR_RETURN(c->offset, config.Float("offset", 0.f));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  const float s = c->scale, o = c->offset;
  auto state = NewLayerState(RescalingKind(), std::move(name), std::move(c));
  if (!std::isfinite(s) || !std::isfinite(o)) {
    state->error = absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(*state), ": scale and offset must be finite, ",
                     "got scale=", s, ", offset=", o));
  }
  return MakeLayer(std::move(state));
}

absl::StatusOr<LayerOutputs> ApplyRescaling(const LayerState& layer,
                                            const BuiltLayer& built,
                                            const Output& x, bool) {
  const std::string& scope = built.name();
  GG_ASSIGN_OR_RETURN(
      Output scale,
      ops::ScalarLike(x, Config(layer).scale, {.name = scope + "/scale"}));
  GG_ASSIGN_OR_RETURN(
      Output offset,
      ops::ScalarLike(x, Config(layer).offset, {.name = scope + "/offset"}));
  GG_ASSIGN_OR_RETURN(Output y, ops::Mul(x, scale, {.name = scope + "/mul"}));
  GG_ASSIGN_OR_RETURN(y, ops::AddV2(y, offset, {.name = scope + "/add"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& RescalingKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Rescaling",
      .default_name = "rescaling",
      .weights_group = "rescaling",
      .fields = {{"scale", "float", ""},
                 {"offset", "float", "0.0"},
                 {"name", "name", "null"}},
      .write_config = WriteRescalingConfig,
      .read_config = ReadRescalingConfig,
      .apply = ApplyRescaling,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(RescalingKind);
}  // namespace models_internal
}  // namespace graphgc
