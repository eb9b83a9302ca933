// Conv2D: a 2-D convolution over NHWC images (TensorFlow's Conv2D op), then
// bias and activation; kernel [kh, kw, in_channels, filters] glorot_uniform,
// bias zeros.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct Conv2DConfig : LayerConfig {
  int64_t filters = 0;
  std::vector<int64_t> window;   // [h, w]
  std::vector<int64_t> strides;  // [h, w]
  Conv2DOptions options;
};

const Conv2DConfig& Config(const LayerState& layer) {
  return ConfigOf<Conv2DConfig>(layer);
}

Json WriteConv2DConfig(const LayerState& layer, const std::string& name) {
  const Conv2DConfig& conv = Config(layer);
  Json c = CommonConfig(name);
  c["filters"] = conv.filters;
  c["kernel_size"] = conv.window;
  c["strides"] = conv.strides;
  c["padding"] = conv.options.padding;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = {1, 1};
  c["groups"] = 1;
  c["activation"] = ActivationName(conv.options.activation);
  c["use_bias"] = conv.options.use_bias;
  c["kernel_initializer"] = InitializerJson("GlorotUniform");
  c["bias_initializer"] = InitializerJson("Zeros");
  for (const char* k :
       {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
        "kernel_constraint", "bias_constraint"}) {
    c[k] = nullptr;
  }
  return c;
}

absl::StatusOr<Layer> ReadConv2DConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(const int64_t filters, config.Int("filters"));
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_size,
                      config.IntList("kernel_size", std::nullopt, true));
  GG_ASSIGN_OR_RETURN(
      std::vector<int64_t> strides,
      config.IntList("strides", std::vector<int64_t>{1, 1}, true));
  GG_ASSIGN_OR_RETURN(std::string padding, config.String("padding", "valid"));
  GG_ASSIGN_OR_RETURN(std::string activation,
                      config.String("activation", "linear"));
  GG_ASSIGN_OR_RETURN(const bool use_bias, config.Bool("use_bias", true));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(config.Only("data_format", "channels_last"));
  GG_RETURN_IF_ERROR(config.Only("groups", 1));
  if (const Json* d = config.Find("dilation_rate");
      d != nullptr && !d->is_null() && *d != Json(1) && *d != Json({1, 1})) {
    GG_RETURN_IF_ERROR(config.Only("dilation_rate", Json({1, 1})));
  }
  // Not in Keras's config (its seed is the initializer's): the builder's.
  GG_ASSIGN_OR_RETURN(const uint64_t seed, config.Seed("seed"));
  return layers::Conv2D(filters, std::move(kernel_size),
                        {.strides = std::move(strides),
                         .padding = std::move(padding),
                         .activation = std::move(activation),
                         .use_bias = use_bias,
                         .name = std::move(name),
                         .seed = seed});
}

absl::StatusOr<TensorShape> Conv2DOutputShape(const LayerState& layer,
                                              const TensorShape& in) {
  const Conv2DConfig& c = Config(layer);
  return WindowOutputShape(layer, in, c.window, c.strides, c.options.padding,
                           "kernel", c.filters);
}

std::vector<WeightSpec> Conv2DWeights(const LayerState& layer,
                                      const TensorShape& in) {
  const Conv2DConfig& c = Config(layer);
  if (c.window.size() != 2) return {};
  // CheckLayer bounded the kernel's element count before a build; for
  // shapes it did not check (a load's budget), fans of 0 say "too large".
  int64_t receptive = 0, fan_in = 0, fan_out = 0;
  if (!MultiplySizes(c.window[0], c.window[1], &receptive) ||
      !MultiplySizes(receptive, in[2], &fan_in) ||
      !MultiplySizes(receptive, c.filters, &fan_out)) {
    fan_in = fan_out = 0;
  }
  std::vector<WeightSpec> out = {
      {.name = "kernel",
       .shape = {c.window[0], c.window[1], in[2], c.filters},
       .init = Initializer::kGlorotUniform,
       .fan_in = fan_in,
       .fan_out = fan_out,
       .seed = c.options.seed}};
  if (c.options.use_bias) out.push_back({.name = "bias", .shape = {c.filters}});
  return out;
}

absl::Status CheckConv2DWeights(const LayerState& layer,
                                const TensorShape& in) {
  const Conv2DConfig& c = Config(layer);
  return CheckFits(
      DT_FLOAT, {c.window[0], c.window[1], in[2], c.filters}, 1,
      absl::StrCat(LayerLabel(layer), " of ", c.filters, " filters on ", in[2],
                   " channels, its kernel"));
}

absl::StatusOr<LayerOutputs> ApplyConv2D(const LayerState& layer,
                                         const BuiltLayer& built,
                                         const Output& x, bool) {
  const Conv2DConfig& c = Config(layer);
  const std::string& scope = built.name();
  GG_ASSIGN_OR_RETURN(
      Output y,
      ops::Conv2D(x, built.variables[0].read,
                  {.name = scope + "/Conv2D",
                   .strides = Nhwc(c.strides),
                   .padding = absl::AsciiStrToUpper(c.options.padding)}));
  if (c.options.use_bias) {
    GG_ASSIGN_OR_RETURN(y, ops::BiasAdd(y, built.variables[1].read,
                                        {.name = scope + "/BiasAdd"}));
  }
  return ActivationOutputs(c.options.activation, y, scope);
}

int64_t Conv2DFilters(const LayerState& layer) { return Config(layer).filters; }

const LayerKind& Conv2DKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Conv2D",
      .default_name = "conv2d",
      .order = 2,
      .weights_group = "conv2d",
      .fields = {{"filters", "int", ""},
                 {"kernel_size", "pair", ""},
                 {"strides", "pair", "[1, 1]"},
                 {"padding", "str", "\"valid\""},
                 {"activation", "activation", "null"},
                 {"use_bias", "bool", "true"},
                 {"name", "name", "null"},
                 {"seed", "seed", "null"}},
      .write_config = WriteConv2DConfig,
      .read_config = ReadConv2DConfig,
      .output_shape = Conv2DOutputShape,
      .weights = Conv2DWeights,
      .check_weights = CheckConv2DWeights,
      .apply = ApplyConv2D,
      .units = Conv2DFilters,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(Conv2DKind);
}  // namespace models_internal

namespace layers {

Layer Conv2D(int64_t filters, std::vector<int64_t> kernel_size,
             Conv2DOptions options) {
  using models_internal::Conv2DConfig;
  auto config = std::make_unique<Conv2DConfig>();
  Conv2DConfig& c = *config;
  c.filters = filters;
  c.options = std::move(options);
  auto state = models_internal::NewLayerState(
      models_internal::Conv2DKind(), c.options.name, std::move(config));
  absl::Status s;
  if (filters < 1) {
    s = absl::InvalidArgumentError(
        absl::StrCat(models_internal::LayerLabel(*state),
                     ": filters must be >= 1, got ", filters));
  }
  if (s.ok()) {
    s = models_internal::SizePair(*state, "kernel_size", kernel_size, c.window);
  }
  if (s.ok()) {
    s = models_internal::SizePair(*state, "strides", c.options.strides,
                                  c.strides);
  }
  if (s.ok()) s = models_internal::CheckPadding(*state, c.options.padding);
  if (s.ok() && !models_internal::KnownActivation(c.options.activation)) {
    s = models_internal::UnknownActivation(*state, c.options.activation);
  }
  state->error = s;
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
