// MaxPooling2D: max pooling over NHWC images (TensorFlow's MaxPool op); no
// variables.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct MaxPooling2DConfig : LayerConfig {
  std::vector<int64_t> window;   // [h, w]
  std::vector<int64_t> strides;  // [h, w]
  Pooling2DOptions options;
};

const MaxPooling2DConfig& Config(const LayerState& layer) {
  return ConfigOf<MaxPooling2DConfig>(layer);
}

Json WriteMaxPooling2DConfig(const LayerState& layer, const std::string& name) {
  const MaxPooling2DConfig& pool = Config(layer);
  Json c = CommonConfig(name);
  c["pool_size"] = pool.window;
  c["padding"] = pool.options.padding;
  c["strides"] = pool.strides;
  c["data_format"] = "channels_last";
  return c;
}

absl::StatusOr<Layer> ReadMaxPooling2DConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(
      std::vector<int64_t> pool_size,
      config.IntList("pool_size", std::vector<int64_t>{2, 2}, true));
  // null strides: the pool size, as Keras.
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      config.IntList("strides", std::vector<int64_t>{}, true));
  GG_ASSIGN_OR_RETURN(std::string padding, config.String("padding", "valid"));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(config.Only("data_format", "channels_last"));
  return layers::MaxPooling2D(std::move(pool_size),
                              {.strides = std::move(strides),
                               .padding = std::move(padding),
                               .name = std::move(name)});
}

absl::StatusOr<TensorShape> MaxPooling2DOutputShape(const LayerState& layer,
                                                    const TensorShape& in) {
  const MaxPooling2DConfig& c = Config(layer);
  return WindowOutputShape(layer, in, c.window, c.strides, c.options.padding,
                           "pool", in.dims() == 3 ? in[2] : 0);
}

absl::StatusOr<LayerOutputs> ApplyMaxPooling2D(const LayerState& layer,
                                               const BuiltLayer& built,
                                               const Output& x, bool) {
  const MaxPooling2DConfig& c = Config(layer);
  GG_ASSIGN_OR_RETURN(
      Output y,
      ops::MaxPool(x, {.name = built.name() + "/MaxPool",
                       .ksize = Nhwc(c.window),
                       .strides = Nhwc(c.strides),
                       .padding = absl::AsciiStrToUpper(c.options.padding)}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& MaxPooling2DKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "MaxPooling2D",
      .default_name = "max_pooling2d",
      .order = 3,
      .weights_group = "max_pooling2d",
      .fields = {{"pool_size", "pair", "[2, 2]"},
                 {"strides", "pair_or_none", "null"},
                 {"padding", "str", "\"valid\""},
                 {"name", "name", "null"}},
      .write_config = WriteMaxPooling2DConfig,
      .read_config = ReadMaxPooling2DConfig,
      .output_shape = MaxPooling2DOutputShape,
      .apply = ApplyMaxPooling2D,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(MaxPooling2DKind);
}  // namespace models_internal

namespace layers {

Layer MaxPooling2D(std::vector<int64_t> pool_size, Pooling2DOptions options) {
  using models_internal::MaxPooling2DConfig;
  auto config = std::make_unique<MaxPooling2DConfig>();
  MaxPooling2DConfig& c = *config;
  c.options = std::move(options);
  auto state = models_internal::NewLayerState(
      models_internal::MaxPooling2DKind(), c.options.name, std::move(config));
  absl::Status s =
      models_internal::SizePair(*state, "pool_size", pool_size, c.window);
  if (s.ok()) {
    s = c.options.strides.empty()
            ? (c.strides = c.window, absl::OkStatus())
            : models_internal::SizePair(*state, "strides", c.options.strides,
                                        c.strides);
  }
  if (s.ok()) s = models_internal::CheckPadding(*state, c.options.padding);
  state->error = s;
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
