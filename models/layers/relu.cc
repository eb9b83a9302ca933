// ReLU (Keras 3's keras.layers.ReLU): max_value, negative_slope and
// threshold as keras.activations.relu computes them; no variables. The
// default arguments give TensorFlow's Relu op; the others compose Relu,
// Maximum, Minimum, Greater, Cast, Mul and Sub in Keras's order.
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct ReLUConfig : LayerConfig {
  std::optional<float> max_value;
  float negative_slope = 0.f;
  float threshold = 0.f;
};

const ReLUConfig& Config(const LayerState& layer) {
  return ConfigOf<ReLUConfig>(layer);
}

const LayerKind& ReLUKind();

Json WriteReLUConfig(const LayerState& layer, const std::string& name) {
  const ReLUConfig& r = Config(layer);
  Json c = CommonConfig(name);
  c["max_value"] = r.max_value ? FloatJson(*r.max_value) : Json(nullptr);
  c["negative_slope"] = FloatJson(r.negative_slope);
  c["threshold"] = FloatJson(r.threshold);
  return c;
}

// Keras's messages for the arguments it refuses (a negative value, None for
// negative_slope and threshold), plus non-finite values.
absl::Status CheckReLU(const LayerState& state, const ReLUConfig& c) {
  const std::string label = LayerLabel(state);
  if (c.max_value && !(*c.max_value >= 0.f && std::isfinite(*c.max_value))) {
    return absl::InvalidArgumentError(absl::StrCat(
        label,
        ": max_value of a ReLU layer cannot be a negative value. Received: "
        "max_value=",
        *c.max_value));
  }
  if (!(c.negative_slope >= 0.f) || !std::isfinite(c.negative_slope)) {
    return absl::InvalidArgumentError(absl::StrCat(
        label,
        ": negative_slope of a ReLU layer cannot be None or a negative "
        "value. Received: negative_slope=",
        c.negative_slope));
  }
  if (!(c.threshold >= 0.f) || !std::isfinite(c.threshold)) {
    return absl::InvalidArgumentError(absl::StrCat(
        label,
        ": threshold of a ReLU layer cannot be None or a negative value. "
        "Received: threshold=",
        c.threshold));
  }
  return absl::OkStatus();
}

absl::StatusOr<Layer> ReadReLUConfig(const ConfigObject& config) {
  auto c = std::make_unique<ReLUConfig>();
  for (const char* key : {"negative_slope", "threshold"}) {
    if (const Json* j = config.Find(key); j != nullptr && j->is_null()) {
      return config.WrongType(key, "a number >= 0", *j);
    }
  }
  if (const Json* j = config.Find("max_value"); j != nullptr && !j->is_null()) {
    GG_ASSIGN_OR_RETURN(c->max_value, config.Float("max_value", 0.f));
  }
  GG_ASSIGN_OR_RETURN(c->negative_slope, config.Float("negative_slope", 0.f));
  GG_ASSIGN_OR_RETURN(c->threshold, config.Float("threshold", 0.f));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  const ReLUConfig& given = *c;
  auto state = NewLayerState(ReLUKind(), std::move(name), std::move(c));
  if (absl::Status s = CheckReLU(*state, given); !s.ok()) state->error = s;
  return MakeLayer(std::move(state));
}

absl::StatusOr<LayerOutputs> ApplyReLU(const LayerState& layer,
                                       const BuiltLayer& built, const Output& x,
                                       bool) {
  const ReLUConfig& c = Config(layer);
  const std::string& scope = built.name();
  auto named = [&](const char* op) {
    return ops::OpOptions{.name = absl::StrCat(scope, "/", op)};
  };
  auto done = [](const Output& y) {
    return LayerOutputs{.pre_activation = y, .output = y};
  };
  if (c.negative_slope != 0.f && !c.max_value && c.threshold == 0.f) {
    GG_ASSIGN_OR_RETURN(Output y,
                        LeakyReluActivation(x, c.negative_slope, scope));
    return done(y);
  }
  std::optional<Output> negative_part;
  if (c.negative_slope != 0.f) {
    // relu(threshold - x)
    GG_ASSIGN_OR_RETURN(Output neg, ops::Neg(x, named("Neg")));
    if (c.threshold != 0.f) {
      GG_ASSIGN_OR_RETURN(Output t,
                          ops::ScalarLike(x, c.threshold, named("threshold")));
      GG_ASSIGN_OR_RETURN(neg, ops::AddV2(neg, t, named("add")));
    }
    GG_ASSIGN_OR_RETURN(negative_part, ops::Relu(neg, named("Relu_1")));
  }
  Output y = x;
  if (c.threshold != 0.f) {
    // x where x > threshold, else 0.
    GG_ASSIGN_OR_RETURN(Output t,
                        ops::ScalarLike(x, c.threshold, named("threshold_1")));
    GG_ASSIGN_OR_RETURN(Output above, ops::Greater(x, t, named("Greater")));
    GG_ASSIGN_OR_RETURN(Output mask, ops::Cast(above, DT_FLOAT, named("Cast")));
    GG_ASSIGN_OR_RETURN(y, ops::Mul(x, mask, named("mul")));
  } else {
    GG_ASSIGN_OR_RETURN(y, ops::Relu(x, named("Relu")));
  }
  if (c.max_value) {
    // clip(y, 0, max_value)
    GG_ASSIGN_OR_RETURN(Output zero, ops::ScalarLike(x, 0, named("zero")));
    GG_ASSIGN_OR_RETURN(Output top,
                        ops::ScalarLike(x, *c.max_value, named("max_value")));
    GG_ASSIGN_OR_RETURN(y, ops::Maximum(y, zero, named("Maximum")));
    GG_ASSIGN_OR_RETURN(y, ops::Minimum(y, top, named("Minimum")));
  }
  if (negative_part) {
    GG_ASSIGN_OR_RETURN(Output slope, ops::ScalarLike(x, c.negative_slope,
                                                      named("negative_slope")));
    GG_ASSIGN_OR_RETURN(Output scaled,
                        ops::Mul(slope, *negative_part, named("mul_1")));
    GG_ASSIGN_OR_RETURN(y, ops::Sub(y, scaled, named("sub")));
  }
  return done(y);
}

const LayerKind& ReLUKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "ReLU",
      .default_name = "re_lu",
      .weights_group = "re_lu",
      .fields = {{"max_value", "float_or_none", "null"},
                 {"negative_slope", "float", "0.0"},
                 {"threshold", "float", "0.0"},
                 {"name", "name", "null"}},
      .write_config = WriteReLUConfig,
      .read_config = ReadReLUConfig,
      .apply = ApplyReLU,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(ReLUKind);
}  // namespace models_internal
}  // namespace graphgc
