// Conv2D: a 2-D convolution over NHWC images (TensorFlow's Conv2D op), then
// bias and activation; kernel [kh, kw, in_channels, filters] glorot_uniform,
// bias zeros.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "models/layers/conv_config.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const Conv2DLayerConfig& Config(const LayerState& layer) {
  return ConfigOf<Conv2DLayerConfig>(layer);
}

Json WriteConv2DConfig(const LayerState& layer, const std::string& name) {
  const Conv2DLayerConfig& conv = Config(layer);
  Json c = CommonConfig(name);
  c["filters"] = conv.filters;
  c["kernel_size"] = conv.window;
  c["strides"] = conv.strides;
  c["padding"] = conv.options.padding;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = {1, 1};
  c["groups"] = 1;
  WriteConvTail(c, conv.options.activation, conv.options.use_bias);
  return c;
}

absl::StatusOr<Layer> ReadConv2DConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(Conv2DArguments a, ReadConv2DArguments(config));
  GG_RETURN_IF_ERROR(CheckConvDefaults(config, Json({1, 1})));
  GG_RETURN_IF_ERROR(config.Only("groups", 1));
  return layers::Conv2D(a.filters, std::move(a.kernel_size),
                        std::move(a.options));
}

absl::StatusOr<TensorShape> Conv2DOutputShape(const LayerState& layer,
                                              const TensorShape& in) {
  const Conv2DLayerConfig& c = Config(layer);
  return WindowOutputShape(layer, in, c.window, c.strides, c.options.padding,
                           "kernel", c.filters);
}

std::vector<WeightSpec> Conv2DWeights(const LayerState& layer,
                                      const TensorShape& in) {
  const Conv2DLayerConfig& c = Config(layer);
  if (c.window.size() != 2) return {};
  return ConvWeights({c.window[0], c.window[1], in[2], c.filters}, c.filters,
                     c.options.use_bias, c.options.seed);
}

absl::Status CheckConv2DWeights(const LayerState& layer,
                                const TensorShape& in) {
  const Conv2DLayerConfig& c = Config(layer);
  return CheckConvKernelFits(
      layer, {c.window[0], c.window[1], in[2], c.filters}, c.filters, in[2]);
}

absl::StatusOr<LayerOutputs> ApplyConv2D(const LayerState& layer,
                                         const BuiltLayer& built,
                                         const Output& x, bool) {
  const Conv2DLayerConfig& c = Config(layer);
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
      .units = Conv2DLayerFilters,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(Conv2DKind);
}  // namespace models_internal

namespace layers {

Layer Conv2D(int64_t filters, std::vector<int64_t> kernel_size,
             Conv2DOptions options) {
  return models_internal::MakeConv2DLayer(
      models_internal::Conv2DKind(), filters, kernel_size, std::move(options));
}

}  // namespace layers
}  // namespace graphgc
