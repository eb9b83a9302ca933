// Conv1D (Keras 3's keras.layers.Conv1D): a 1-D convolution over
// [batch, steps, channels] sequences, then bias and activation; kernel
// [k, in_channels, filters] glorot_uniform, bias zeros. As Keras's
// TensorFlow backend (tf.nn.conv1d), the sequence and the kernel are
// reshaped to a height-1 image and a [1, k, in, filters] filter for
// TensorFlow's Conv2D op, and the result back; "causal" padding pads k - 1
// zero steps in front (a Pad op) and convolves "valid".
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers/conv_config.h"
#include "models/spatial_layers.h"
#include "ops/concat_ops.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct Conv1DConfig : LayerConfig {
  int64_t filters = 0;
  int64_t kernel = 0;
  int64_t stride = 1;
  Conv1DOptions options;
};

const Conv1DConfig &Config(const LayerState &layer) {
  return ConfigOf<Conv1DConfig>(layer);
}

Json WriteConv1DConfig(const LayerState &layer, const std::string &name) {
  const Conv1DConfig &conv = Config(layer);
  Json c = CommonConfig(name);
  c["filters"] = conv.filters;
  c["kernel_size"] = {conv.kernel};
  c["strides"] = {conv.stride};
  c["padding"] = conv.options.padding;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = {1};
  c["groups"] = 1;
  WriteConvTail(c, conv.options.activation, conv.options.use_bias);
  return c;
}

// One size of a Keras 1-tuple ("kernel_size": 3 or [3]), or a list of
// another length passed on for the builder to refuse (as 0).
int64_t Single(const std::vector<int64_t> &v) {
  return v.size() == 1 ? v[0] : 0;
}

absl::StatusOr<Layer> ReadConv1DConfig(const ConfigObject &config) {
  GG_ASSIGN_OR_RETURN(const int64_t filters, config.Int("filters"));
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_size,
                      config.IntList("kernel_size", std::nullopt, true));
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      config.IntList("strides", std::vector<int64_t>{1}, true));
  GG_ASSIGN_OR_RETURN(std::string padding, config.String("padding", "valid"));
  GG_ASSIGN_OR_RETURN(std::string activation,
                      config.String("activation", "linear"));
  GG_ASSIGN_OR_RETURN(const bool use_bias, config.Bool("use_bias", true));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(CheckConvDefaults(config, Json({1})));
  GG_RETURN_IF_ERROR(config.Only("groups", 1));
  GG_ASSIGN_OR_RETURN(const uint64_t seed, config.Seed("seed"));
  return layers::Conv1D(filters, Single(kernel_size),
                        {.strides = Single(strides),
                         .padding = std::move(padding),
                         .activation = std::move(activation),
                         .use_bias = use_bias,
                         .name = std::move(name),
                         .seed = seed});
}

absl::StatusOr<TensorShape> Conv1DOutputShape(const LayerState &layer,
                                              const TensorShape &in) {
  const Conv1DConfig &c = Config(layer);
  if (in.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer),
        ": takes sequences [batch, steps, channels], (None, steps, c), but "
        "gets ",
        KerasShape(in)));
  }
  const std::string &padding = c.options.padding;
  int64_t steps = 0;
  if (padding == "same" || padding == "causal") {
    steps = (in[0] - 1) / c.stride + 1;
  } else if (c.kernel > in[0]) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": its kernel_size ", c.kernel,
        " does not fit inputs ", KerasShape(in),
        " with padding \"valid\" (use a smaller kernel_size, longer inputs "
        "or padding \"same\")"));
  } else {
    steps = (in[0] - c.kernel) / c.stride + 1;
  }
  return TensorShape({steps, c.filters});
}

std::vector<WeightSpec> Conv1DWeights(const LayerState &layer,
                                      const TensorShape &in) {
  const Conv1DConfig &c = Config(layer);
  return ConvWeights({c.kernel, in[1], c.filters}, c.filters,
                     c.options.use_bias, c.options.seed);
}

absl::Status CheckConv1DWeights(const LayerState &layer,
                                const TensorShape &in) {
  const Conv1DConfig &c = Config(layer);
  return CheckConvKernelFits(layer, {c.kernel, in[1], c.filters}, c.filters,
                             in[1]);
}

absl::StatusOr<LayerOutputs> ApplyConv1D(const LayerState &layer,
                                         const BuiltLayer &built,
                                         const Output &x, bool) {
  const Conv1DConfig &c = Config(layer);
  const std::string &scope = built.name();
  const TensorShape &in = built.shape;
  GG_ASSIGN_OR_RETURN(TensorShape out, Conv1DOutputShape(layer, in));
  Output seq = x;
  int64_t steps = in[0];
  std::string padding = c.options.padding;
  if (padding == "causal") {
    GG_ASSIGN_OR_RETURN(seq, ops::Pad(x, {0, 0, c.kernel - 1, 0, 0, 0},
                                      {.name = scope + "/Pad"}));
    if (__builtin_add_overflow(steps, c.kernel - 1, &steps)) {
      return absl::InvalidArgumentError(
          absl::StrCat(LayerLabel(layer), ": causal padding of inputs ",
                       KerasShape(in), " overflows int64"));
    }
    padding = "valid";
  }
  GG_ASSIGN_OR_RETURN(Output image,
                      ops::Reshape(seq, {-1, 1, steps, in[1]},
                                   {.name = scope + "/ExpandDims"}));
  GG_ASSIGN_OR_RETURN(
      Output filter,
      ops::Reshape(built.variables[0].read, {1, c.kernel, in[1], c.filters},
                   {.name = scope + "/ExpandDims_1"}));
  GG_ASSIGN_OR_RETURN(Output y,
                      ops::Conv2D(image, filter,
                                  {.name = scope + "/Conv2D",
                                   .strides = {1, 1, c.stride, 1},
                                   .padding = absl::AsciiStrToUpper(padding)}));
  GG_ASSIGN_OR_RETURN(
      y, ops::Reshape(y, {-1, out[0], out[1]}, {.name = scope + "/Squeeze"}));
  if (c.options.use_bias) {
    GG_ASSIGN_OR_RETURN(y, ops::BiasAdd(y, built.variables[1].read,
                                        {.name = scope + "/BiasAdd"}));
  }
  return ActivationOutputs(c.options.activation, y, scope);
}

int64_t Conv1DFilters(const LayerState &layer) { return Config(layer).filters; }

const LayerKind &Conv1DKind() {
  static const LayerKind *kind = new LayerKind{
      .class_name = "Conv1D",
      .default_name = "conv1d",
      .order = 38,
      .weights_group = "conv1d",
      .fields = {{"filters", "int", ""},
                 {"kernel_size", "tuple1", ""},
                 {"strides", "tuple1", "1"},
                 {"padding", "str", "\"valid\""},
                 {"data_format", "str", "null"},
                 {"activation", "activation", "null"},
                 {"use_bias", "bool", "true"},
                 {"name", "name", "null"},
                 {"seed", "seed", "null"}},
      .write_config = WriteConv1DConfig,
      .read_config = ReadConv1DConfig,
      .output_shape = Conv1DOutputShape,
      .weights = Conv1DWeights,
      .check_weights = CheckConv1DWeights,
      .apply = ApplyConv1D,
      .units = Conv1DFilters,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(Conv1DKind);
}  // namespace models_internal

namespace layers {

Layer Conv1D(int64_t filters, int64_t kernel_size, Conv1DOptions options) {
  using models_internal::Conv1DConfig;
  using models_internal::LayerLabel;
  auto config = std::make_unique<Conv1DConfig>();
  Conv1DConfig &c = *config;
  c.filters = filters;
  c.kernel = kernel_size;
  c.stride = options.strides;
  c.options = std::move(options);
  auto state = models_internal::NewLayerState(
      models_internal::Conv1DKind(), c.options.name, std::move(config));
  absl::Status s;
  const auto at_least_one = [&](const char *what, int64_t v) {
    if (s.ok() && v < 1) {
      s = absl::InvalidArgumentError(absl::StrCat(
          LayerLabel(*state), ": ", what, " must be >= 1, got ", v));
    }
  };
  at_least_one("filters", filters);
  at_least_one("kernel_size", kernel_size);
  at_least_one("strides", c.stride);
  const std::string &padding = c.options.padding;
  if (s.ok() && padding != "valid" && padding != "same" &&
      padding != "causal") {
    s = absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(*state),
                     ": padding must be \"valid\", \"same\" or \"causal\", "
                     "got \"",
                     padding, "\""));
  }
  if (s.ok() && !models_internal::KnownActivation(c.options.activation)) {
    s = models_internal::UnknownActivation(*state, c.options.activation);
  }
  state->error = s;
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
