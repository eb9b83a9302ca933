// What the convolution kinds share: Keras config fields, the 2-D layers'
// config and builder, and the kernel and bias.
#include "models/layers/conv_config.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/training.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::Status CheckConv2DArguments(const LayerState& layer, int64_t filters,
                                  const std::vector<int64_t>& kernel_size,
                                  const std::vector<int64_t>& strides,
                                  const std::string& padding,
                                  const std::string& activation,
                                  std::vector<int64_t>& window,
                                  std::vector<int64_t>& hw_strides) {
  if (filters < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": filters must be >= 1, got ", filters));
  }
  GG_RETURN_IF_ERROR(SizePair(layer, "kernel_size", kernel_size, window));
  GG_RETURN_IF_ERROR(SizePair(layer, "strides", strides, hw_strides));
  GG_RETURN_IF_ERROR(CheckPadding(layer, padding));
  if (!KnownActivation(activation)) return UnknownActivation(layer, activation);
  return absl::OkStatus();
}

}  // namespace

void WriteConvTail(Json& c, const std::string& activation, bool use_bias) {
  c["activation"] = ActivationName(activation);
  c["use_bias"] = use_bias;
  c["kernel_initializer"] = InitializerJson("GlorotUniform");
  c["bias_initializer"] = InitializerJson("Zeros");
  for (const char* k :
       {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
        "kernel_constraint", "bias_constraint"}) {
    c[k] = nullptr;
  }
}

absl::Status CheckConvDefaults(const ConfigObject& config, const Json& ones) {
  GG_RETURN_IF_ERROR(config.Only("data_format", "channels_last"));
  // Keras writes a tuple; a bare 1 is what a user may write.
  if (const Json* d = config.Find("dilation_rate");
      d != nullptr && !d->is_null() && *d != Json(1)) {
    GG_RETURN_IF_ERROR(config.Only("dilation_rate", ones));
  }
  return absl::OkStatus();
}

Layer MakeConv2DLayer(const LayerKind& kind, int64_t filters,
                      const std::vector<int64_t>& kernel_size,
                      Conv2DOptions options) {
  auto config = std::make_unique<Conv2DLayerConfig>();
  Conv2DLayerConfig& c = *config;
  c.filters = filters;
  c.options = std::move(options);
  auto state = NewLayerState(kind, c.options.name, std::move(config));
  state->error = CheckConv2DArguments(
      *state, filters, kernel_size, c.options.strides, c.options.padding,
      c.options.activation, c.window, c.strides);
  return MakeLayer(std::move(state));
}

int64_t Conv2DLayerFilters(const LayerState& layer) {
  return ConfigOf<Conv2DLayerConfig>(layer).filters;
}

absl::StatusOr<Conv2DArguments> ReadConv2DArguments(
    const ConfigObject& config) {
  Conv2DArguments a;
  GG_ASSIGN_OR_RETURN(a.filters, config.Int("filters"));
  GG_ASSIGN_OR_RETURN(a.kernel_size,
                      config.IntList("kernel_size", std::nullopt, true));
  GG_ASSIGN_OR_RETURN(
      a.options.strides,
      config.IntList("strides", std::vector<int64_t>{1, 1}, true));
  GG_ASSIGN_OR_RETURN(a.options.padding, config.String("padding", "valid"));
  GG_ASSIGN_OR_RETURN(a.options.activation,
                      config.String("activation", "linear"));
  GG_ASSIGN_OR_RETURN(a.options.use_bias, config.Bool("use_bias", true));
  GG_ASSIGN_OR_RETURN(a.options.name, config.String("name", ""));
  GG_ASSIGN_OR_RETURN(a.options.seed, config.Seed("seed"));
  return a;
}

std::vector<WeightSpec> ConvWeights(const std::vector<int64_t>& kernel,
                                    int64_t filters, bool use_bias,
                                    uint64_t seed) {
  const size_t rank = kernel.size();
  int64_t receptive = 1, fan_in = 0, fan_out = 0;
  bool fits = rank >= 2;
  for (size_t i = 0; fits && i + 2 < rank; ++i) {
    fits = MultiplySizes(receptive, kernel[i], &receptive);
  }
  if (!fits || !MultiplySizes(receptive, kernel[rank - 2], &fan_in) ||
      !MultiplySizes(receptive, kernel[rank - 1], &fan_out)) {
    fan_in = fan_out = 0;
  }
  std::vector<WeightSpec> out = {{.name = "kernel",
                                  .shape = TensorShape(kernel),
                                  .init = Initializer::kGlorotUniform,
                                  .fan_in = fan_in,
                                  .fan_out = fan_out,
                                  .seed = seed}};
  if (use_bias) out.push_back({.name = "bias", .shape = {filters}});
  return out;
}

absl::Status CheckConvKernelFits(const LayerState& layer,
                                 const std::vector<int64_t>& kernel,
                                 int64_t filters, int64_t in_channels) {
  return CheckFits(
      DT_FLOAT, TensorShape(kernel), 1,
      absl::StrCat(LayerLabel(layer), " of ", filters, " filters on ",
                   in_channels, " channels, its kernel"));
}

}  // namespace models_internal
}  // namespace graphgc
