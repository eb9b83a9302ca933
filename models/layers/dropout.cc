// Dropout: in training steps, zeroes each element with probability `rate`
// and scales the rest by 1 / (1 - rate) (RandomUniform, GreaterEqual, Cast
// and Mul); in inference, the identity (no node).
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "models/random_seed.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct DropoutConfig : LayerConfig {
  float rate = 0;
  uint64_t seed = 0;  // never 0 (a drawn seed when given 0)
};

const DropoutConfig& Config(const LayerState& layer) {
  return ConfigOf<DropoutConfig>(layer);
}

Json WriteDropoutConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["rate"] = FloatJson(Config(layer).rate);
  c["seed"] = Config(layer).seed;
  c["noise_shape"] = nullptr;
  return c;
}

absl::StatusOr<Layer> ReadDropoutConfig(const ConfigObject& config) {
  if (config.Find("rate") == nullptr) return config.Missing("rate");
  GG_ASSIGN_OR_RETURN(const float rate, config.Float("rate", 0.5f));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  // null or absent: a drawn seed, as Keras.
  GG_ASSIGN_OR_RETURN(const uint64_t seed, config.Seed("seed"));
  GG_RETURN_IF_ERROR(config.Only("noise_shape", nullptr));
  return layers::Dropout(rate, std::move(name), seed);
}

// Training: x * (1 / (1 - rate)) * mask, mask = Cast(RandomUniform(Shape(x))
// >= rate): each element kept with probability 1 - rate, so the expected
// output is x. The mask is a Cast of a bool, which passes no gradient.
// Inference: x itself, no node.
absl::StatusOr<LayerOutputs> ApplyDropout(const LayerState& layer,
                                          const BuiltLayer& built,
                                          const Output& x, bool training) {
  const DropoutConfig& c = Config(layer);
  if (!training || c.rate == 0.f) {
    return LayerOutputs{.pre_activation = x, .output = x};
  }
  const std::string s = built.name();
  GG_ASSIGN_OR_RETURN(Output shape, ops::Shape(x, {.name = s + "/Shape"}));
  // Both seeds non-zero: a reproducible stream (RandomUniform's rule).
  GG_ASSIGN_OR_RETURN(
      Output uniform,
      ops::RandomUniform(shape,
                         {.name = s + "/random_uniform/RandomUniform",
                          .seed = static_cast<int64_t>(c.seed & INT64_MAX) | 1,
                          .seed2 = static_cast<int64_t>(c.seed >> 32) | 1}));
  GG_ASSIGN_OR_RETURN(Output rate,
                      ops::ScalarLike(x, c.rate, {.name = s + "/rate"}));
  GG_ASSIGN_OR_RETURN(
      Output keep,
      ops::GreaterEqual(uniform, rate, {.name = s + "/GreaterEqual"}));
  GG_ASSIGN_OR_RETURN(Output mask,
                      ops::Cast(keep, DT_FLOAT, {.name = s + "/Cast"}));
  GG_ASSIGN_OR_RETURN(
      Output scale,
      ops::ScalarLike(x, 1.0 / (1.0 - static_cast<double>(c.rate)),
                      {.name = s + "/Const"}));
  GG_ASSIGN_OR_RETURN(Output scaled, ops::Mul(x, scale, {.name = s + "/Mul"}));
  GG_ASSIGN_OR_RETURN(Output y, ops::Mul(scaled, mask, {.name = s + "/Mul_1"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

bool DropoutTrains(const LayerState& layer) { return Config(layer).rate > 0.f; }

const LayerKind& DropoutKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Dropout",
      .default_name = "dropout",
      .order = 5,
      .weights_group = "dropout",
      .fields = {{"rate", "float", ""},
                 {"seed", "seed", "null"},
                 {"name", "name", "null"}},
      .write_config = WriteDropoutConfig,
      .read_config = ReadDropoutConfig,
      .apply = ApplyDropout,
      .has_training_path = DropoutTrains,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(DropoutKind);
}  // namespace models_internal

namespace layers {

Layer Dropout(float rate, std::string name) {
  return Dropout(rate, std::move(name), 0);
}

Layer Dropout(float rate, std::string name, uint64_t seed) {
  auto config = std::make_unique<models_internal::DropoutConfig>();
  config->rate = rate;
  // A drawn seed when given none (set_random_seed's stream when set): the
  // layer's masks still follow one fixed stream per layer.
  config->seed = seed != 0 ? seed : DrawSeed();
  auto state = models_internal::NewLayerState(
      models_internal::DropoutKind(), std::move(name), std::move(config));
  if (!(rate >= 0.f && rate < 1.f)) {  // NaN fails too
    state->error = absl::InvalidArgumentError(
        absl::StrCat(models_internal::LayerLabel(*state),
                     ": rate must be in [0, 1), got ", rate));
  }
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
