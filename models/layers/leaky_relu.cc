// LeakyReLU (Keras 3's keras.layers.LeakyReLU): x for x >= 0, negative_slope
// * x below; no variables. Built by the leaky_relu activation's builder
// (LeakyReluActivation, models/layers/activations.cc).
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

constexpr float kDefaultSlope = 0.3f;  // Keras 3's default

struct LeakyReLUConfig : LayerConfig {
  float negative_slope = kDefaultSlope;
};

float Slope(const LayerState& layer) {
  return ConfigOf<LeakyReLUConfig>(layer).negative_slope;
}

const LayerKind& LeakyReLUKind();

// The layer, its bad slope (negative, NaN or infinite) reported by
// Sequential::Create with Keras's words.
Layer MakeLeakyReLU(float negative_slope, std::string name) {
  auto config = std::make_unique<LeakyReLUConfig>();
  config->negative_slope = negative_slope;
  auto state =
      NewLayerState(LeakyReLUKind(), std::move(name), std::move(config));
  if (!std::isfinite(negative_slope) || !(negative_slope >= 0.f)) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state),
        ": the negative_slope value of a Leaky ReLU layer cannot be None or "
        "negative value. Expected a finite float >= 0. Received: "
        "negative_slope=",
        negative_slope));
  }
  return MakeLayer(std::move(state));
}

Json WriteLeakyReLUConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["negative_slope"] = FloatJson(Slope(layer));
  return c;
}

// Keras 3 writes "negative_slope"; Keras 2's "alpha" is read too, as Keras 3
// takes it.
absl::StatusOr<Layer> ReadLeakyReLUConfig(const ConfigObject& config) {
  const char* key = config.Find("negative_slope") == nullptr &&
                            config.Find("alpha") != nullptr
                        ? "alpha"
                        : "negative_slope";
  if (const Json* j = config.Find(key); j != nullptr && j->is_null()) {
    return config.WrongType(key, "a number >= 0", *j);
  }
  GG_ASSIGN_OR_RETURN(const float slope, config.Float(key, kDefaultSlope));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return MakeLeakyReLU(slope, std::move(name));
}

absl::StatusOr<LayerOutputs> ApplyLeakyReLU(const LayerState& layer,
                                            const BuiltLayer& built,
                                            const Output& x, bool) {
  GG_ASSIGN_OR_RETURN(Output y,
                      LeakyReluActivation(x, Slope(layer), built.name()));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& LeakyReLUKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "LeakyReLU",
      .default_name = "leaky_re_lu",
      .order = 9,
      .weights_group = "leaky_re_lu",
      .fields = {{"negative_slope", "float", "0.3"}, {"name", "name", "null"}},
      .write_config = WriteLeakyReLUConfig,
      .read_config = ReadLeakyReLUConfig,
      .apply = ApplyLeakyReLU,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(LeakyReLUKind);
}  // namespace models_internal
}  // namespace graphgc
