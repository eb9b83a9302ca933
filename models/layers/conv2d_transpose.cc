// Conv2DTranspose (Keras 3's keras.layers.Conv2DTranspose): the transpose of
// a 2-D convolution over NHWC images, then bias and activation; kernel
// [kh, kw, filters, in_channels] glorot_uniform, bias zeros. As Keras's
// TensorFlow backend (tf.nn.conv_transpose), the forward node is
// TensorFlow's Conv2DBackpropInput with the inputs as out_backprop and
// input_sizes [batch, out_h, out_w, filters], the batch read at run time
// from the inputs' Shape.
#include <algorithm>
#include <cstdint>
#include <limits>
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

const Conv2DLayerConfig& Config(const LayerState& layer) {
  return ConfigOf<Conv2DLayerConfig>(layer);
}

Json WriteConv2DTransposeConfig(const LayerState& layer,
                                const std::string& name) {
  const Conv2DLayerConfig& conv = Config(layer);
  Json c = CommonConfig(name);
  c["filters"] = conv.filters;
  c["kernel_size"] = conv.window;
  c["strides"] = conv.strides;
  c["padding"] = conv.options.padding;
  c["output_padding"] = nullptr;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = {1, 1};
  WriteConvTail(c, conv.options.activation, conv.options.use_bias);
  return c;
}

absl::StatusOr<Layer> ReadConv2DTransposeConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(Conv2DArguments a, ReadConv2DArguments(config));
  GG_RETURN_IF_ERROR(config.Only("output_padding", nullptr));
  GG_RETURN_IF_ERROR(CheckConvDefaults(config, Json({1, 1})));
  return layers::Conv2DTranspose(a.filters, std::move(a.kernel_size),
                                 std::move(a.options));
}

// Keras's compute_conv_transpose_output_shape with output_padding None:
// (in - 1) * stride + max(k, stride) for "valid", in * stride for "same".
// Sizes must fit Conv2DBackpropInput's int32 input_sizes.
absl::StatusOr<TensorShape> Conv2DTransposeOutputShape(const LayerState& layer,
                                                       const TensorShape& in) {
  const Conv2DLayerConfig& c = Config(layer);
  if (in.dims() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer),
        ": takes NHWC images [batch, height, width, channels], (None, h, w, "
        "c), but gets ",
        KerasShape(in)));
  }
  int64_t out[2] = {0, 0};
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t k = c.window[axis], s = c.strides[axis];
    bool overflow = false;
    if (c.options.padding == "same") {
      overflow = __builtin_mul_overflow(in[axis], s, &out[axis]);
    } else {
      overflow = __builtin_mul_overflow(in[axis] - 1, s, &out[axis]) ||
                 __builtin_add_overflow(out[axis], std::max(k, s), &out[axis]);
    }
    if (overflow || out[axis] > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          LayerLabel(layer), ": its outputs on inputs ", KerasShape(in),
          " would be larger than 2^31 - 1 along axis ", axis + 1));
    }
  }
  return TensorShape({out[0], out[1], c.filters});
}

// The kernel is [kh, kw, filters, in_channels]: Keras's fans are those of
// that shape.
std::vector<WeightSpec> Conv2DTransposeWeights(const LayerState& layer,
                                               const TensorShape& in) {
  const Conv2DLayerConfig& c = Config(layer);
  if (c.window.size() != 2) return {};
  return ConvWeights({c.window[0], c.window[1], c.filters, in[2]}, c.filters,
                     c.options.use_bias, c.options.seed);
}

absl::Status CheckConv2DTransposeWeights(const LayerState& layer,
                                         const TensorShape& in) {
  const Conv2DLayerConfig& c = Config(layer);
  return CheckConvKernelFits(
      layer, {c.window[0], c.window[1], c.filters, in[2]}, c.filters, in[2]);
}

absl::StatusOr<LayerOutputs> ApplyConv2DTranspose(const LayerState& layer,
                                                  const BuiltLayer& built,
                                                  const Output& x, bool) {
  const Conv2DLayerConfig& c = Config(layer);
  const std::string& scope = built.name();
  GG_ASSIGN_OR_RETURN(TensorShape out,
                      Conv2DTransposeOutputShape(layer, built.shape));
  // input_sizes: the batch of x, then the per-sample output shape.
  GG_ASSIGN_OR_RETURN(Output shape, ops::Shape(x, {.name = scope + "/Shape"}));
  GG_ASSIGN_OR_RETURN(Output batch,
                      ops::Slice(shape, {0}, {1}, {.name = scope + "/Slice"}));
  GG_ASSIGN_OR_RETURN(
      Tensor rest_value,
      Tensor::FromData<int32_t>(
          {3}, std::vector<int32_t>{static_cast<int32_t>(out[0]),
                                    static_cast<int32_t>(out[1]),
                                    static_cast<int32_t>(out[2])}));
  GG_ASSIGN_OR_RETURN(Output rest,
                      ops::Const(*x.graph(), std::move(rest_value),
                                 {.name = scope + "/output_shape"}));
  GG_ASSIGN_OR_RETURN(
      Output sizes,
      ops::ConcatV2({batch, rest}, 0, {.name = scope + "/input_sizes"}));
  GG_ASSIGN_OR_RETURN(
      Output y, ops::Conv2DBackpropInput(
                    sizes, built.variables[0].read, x,
                    {.name = scope + "/conv2d_transpose",
                     .strides = Nhwc(c.strides),
                     .padding = absl::AsciiStrToUpper(c.options.padding)}));
  if (c.options.use_bias) {
    GG_ASSIGN_OR_RETURN(y, ops::BiasAdd(y, built.variables[1].read,
                                        {.name = scope + "/BiasAdd"}));
  }
  return ActivationOutputs(c.options.activation, y, scope);
}

const LayerKind& Conv2DTransposeKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Conv2DTranspose",
      .default_name = "conv2d_transpose",
      .order = 39,
      .weights_group = "conv2d_transpose",
      .fields = {{"filters", "int", ""},
                 {"kernel_size", "pair", ""},
                 {"strides", "pair", "[1, 1]"},
                 {"padding", "str", "\"valid\""},
                 {"output_padding", "pair_or_none", "null"},
                 {"data_format", "str", "null"},
                 {"dilation_rate", "pair", "[1, 1]"},
                 {"activation", "activation", "null"},
                 {"use_bias", "bool", "true"},
                 {"name", "name", "null"},
                 {"seed", "seed", "null"}},
      .write_config = WriteConv2DTransposeConfig,
      .read_config = ReadConv2DTransposeConfig,
      .output_shape = Conv2DTransposeOutputShape,
      .weights = Conv2DTransposeWeights,
      .check_weights = CheckConv2DTransposeWeights,
      .apply = ApplyConv2DTranspose,
      .units = Conv2DLayerFilters,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(Conv2DTransposeKind);
}  // namespace models_internal

namespace layers {

Layer Conv2DTranspose(int64_t filters, std::vector<int64_t> kernel_size,
                      Conv2DTransposeOptions options) {
  return models_internal::MakeConv2DLayer(
      models_internal::Conv2DTransposeKind(), filters, kernel_size,
      std::move(options));
}

}  // namespace layers
}  // namespace graphgc
