// UpSampling2D (Keras 3's keras.layers.UpSampling2D): each pixel of NHWC
// images repeated size[0] times down and size[1] times across, "nearest"
// interpolation only; no variables. Keras's TensorFlow backend repeats
// along each axis; here the image is reshaped to [batch, h, 1, w, 1, c],
// multiplied by ones [1, 1, sh, 1, sw, 1] (broadcasting) and reshaped to
// [batch, h * sh, w * sw, c]: the same values, and a gradient the Mul's
// broadcasting gradient sums back.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/spatial_layers.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct UpSampling2DConfig : LayerConfig {
  std::vector<int64_t> size;  // [h, w]
  std::string interpolation;
};

const UpSampling2DConfig &Config(const LayerState &layer) {
  return ConfigOf<UpSampling2DConfig>(layer);
}

Json WriteUpSampling2DConfig(const LayerState &layer, const std::string &name) {
  const UpSampling2DConfig &c = Config(layer);
  Json j = CommonConfig(name);
  j["size"] = c.size;
  j["data_format"] = "channels_last";
  j["interpolation"] = c.interpolation;
  return j;
}

absl::StatusOr<Layer> ReadUpSampling2DConfig(const ConfigObject &config) {
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> size,
                      config.IntList("size", std::vector<int64_t>{2, 2}, true));
  GG_ASSIGN_OR_RETURN(std::string interpolation,
                      config.String("interpolation", "nearest"));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(config.Only("data_format", "channels_last"));
  return layers::UpSampling2D(std::move(size), std::move(interpolation),
                              std::move(name));
}

absl::StatusOr<TensorShape> UpSampling2DOutputShape(const LayerState &layer,
                                                    const TensorShape &in) {
  const UpSampling2DConfig &c = Config(layer);
  if (in.dims() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer),
        ": takes NHWC images [batch, height, width, channels], (None, h, w, "
        "c), but gets ",
        KerasShape(in)));
  }
  int64_t h = 0, w = 0;
  if (__builtin_mul_overflow(in[0], c.size[0], &h) ||
      __builtin_mul_overflow(in[1], c.size[1], &w)) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer), ": size [", c.size[0], ", ", c.size[1],
                     "] of inputs ", KerasShape(in), " overflows int64"));
  }
  return TensorShape({h, w, in[2]});
}

absl::StatusOr<LayerOutputs> ApplyUpSampling2D(const LayerState &layer,
                                               const BuiltLayer &built,
                                               const Output &x, bool) {
  const UpSampling2DConfig &c = Config(layer);
  const TensorShape &in = built.shape;
  GG_ASSIGN_OR_RETURN(TensorShape out, UpSampling2DOutputShape(layer, in));
  const std::string &scope = built.name();
  GG_ASSIGN_OR_RETURN(Output split,
                      ops::Reshape(x, {-1, in[0], 1, in[1], 1, in[2]},
                                   {.name = scope + "/Reshape"}));
  const TensorShape ones_shape({1, 1, c.size[0], 1, c.size[1], 1});
  GG_ASSIGN_OR_RETURN(
      Tensor ones_value,
      Tensor::FromData<float>(
          ones_shape, std::vector<float>(ones_shape.num_elements(), 1.f)));
  GG_ASSIGN_OR_RETURN(Output ones, ops::Const(*x.graph(), std::move(ones_value),
                                              {.name = scope + "/ones"}));
  GG_ASSIGN_OR_RETURN(Output repeated,
                      ops::Mul(split, ones, {.name = scope + "/Repeat"}));
  GG_ASSIGN_OR_RETURN(Output y,
                      ops::Reshape(repeated, {-1, out[0], out[1], out[2]},
                                   {.name = scope + "/Reshape_1"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind &UpSampling2DKind() {
  static const LayerKind *kind = new LayerKind{
      .class_name = "UpSampling2D",
      .default_name = "up_sampling2d",
      .order = 37,
      .weights_group = "up_sampling2d",
      .fields = {{"size", "pair", "[2, 2]"},
                 {"data_format", "str", "null"},
                 {"interpolation", "str", "\"nearest\""},
                 {"name", "name", "null"}},
      .write_config = WriteUpSampling2DConfig,
      .read_config = ReadUpSampling2DConfig,
      .output_shape = UpSampling2DOutputShape,
      .apply = ApplyUpSampling2D,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(UpSampling2DKind);
}  // namespace models_internal

namespace layers {

Layer UpSampling2D(std::vector<int64_t> size, std::string interpolation,
                   std::string name) {
  using models_internal::UpSampling2DConfig;
  auto config = std::make_unique<UpSampling2DConfig>();
  UpSampling2DConfig &c = *config;
  c.interpolation = std::move(interpolation);
  auto state = models_internal::NewLayerState(
      models_internal::UpSampling2DKind(), std::move(name), std::move(config));
  absl::Status s = models_internal::SizePair(*state, "size", size, c.size);
  if (s.ok() && c.interpolation != "nearest") {
    // Keras's other interpolations are valid arguments graphgc lacks.
    const bool keras =
        c.interpolation == "bilinear" || c.interpolation == "bicubic" ||
        c.interpolation == "area" || c.interpolation == "lanczos3" ||
        c.interpolation == "lanczos5";
    const std::string what = absl::StrCat(
        models_internal::LayerLabel(*state), ": interpolation \"",
        c.interpolation, "\" is ", keras ? "not implemented" : "unknown",
        " (graphgc implements \"nearest\" only)");
    s = keras ? absl::UnimplementedError(what)
              : absl::InvalidArgumentError(what);
  }
  // The ones constant holds size[0] * size[1] floats.
  if (s.ok() && c.size[0] > (int64_t{1} << 31) / c.size[1]) {
    s = absl::InvalidArgumentError(
        absl::StrCat(models_internal::LayerLabel(*state), ": size [", c.size[0],
                     ", ", c.size[1], "] is too large"));
  }
  state->error = s;
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
