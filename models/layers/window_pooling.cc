// Window pooling shared by AveragePooling2D, MaxPooling1D and
// AveragePooling1D (models/layers/window_pooling.h).
#include "models/layers/window_pooling.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/layers.h"
#include "ops/conv_ops.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct WindowPoolingConfig : LayerConfig {
  int spatial = 2;
  bool max = false;
  std::vector<int64_t> window;   // `spatial` values
  std::vector<int64_t> strides;  // `spatial` values
  std::string padding;
};

const WindowPoolingConfig& Config(const LayerState& layer) {
  return ConfigOf<WindowPoolingConfig>(layer);
}

// `given` (1 or `spatial` values, each >= 1) as `spatial` values.
absl::Status SizeTuple(const LayerState& layer, int spatial,
                       const std::string& what,
                       const std::vector<int64_t>& given,
                       std::vector<int64_t>& out) {
  if (spatial == 2) return SizePair(layer, what, given, out);
  if (given.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer), ": ", what, " must have 1 value, got ",
                     given.size(), " ([", absl::StrJoin(given, ", "), "])"));
  }
  if (given[0] < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": ", what, " must be >= 1, got ", given[0]));
  }
  out = given;
  return absl::OkStatus();
}

Json WriteWindowPoolingConfig(const LayerState& layer,
                              const std::string& name) {
  const WindowPoolingConfig& c = Config(layer);
  Json j = CommonConfig(name);
  j["pool_size"] = c.window;
  j["padding"] = c.padding;
  j["strides"] = c.strides;
  j["data_format"] = "channels_last";
  return j;
}

// The 1-D output size of a window of `k` at `stride` over `size` steps, as
// TensorFlow computes it; written so that nothing can overflow.
absl::StatusOr<int64_t> Steps(const LayerState& layer, const TensorShape& in,
                              int64_t size, int64_t k, int64_t stride,
                              const std::string& padding) {
  if (padding == "same") return (size - 1) / stride + 1;
  if (k > size) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": its pool_size ", k, " does not fit inputs ",
        KerasShape(in),
        " with padding \"valid\" (use a smaller pool_size, longer inputs or "
        "padding \"same\")"));
  }
  return (size - k) / stride + 1;
}

absl::StatusOr<TensorShape> WindowPoolingOutputShape(const LayerState& layer,
                                                     const TensorShape& in) {
  const WindowPoolingConfig& c = Config(layer);
  if (c.spatial == 2) {
    return WindowOutputShape(layer, in, c.window, c.strides, c.padding, "pool",
                             in.dims() == 3 ? in[2] : 0);
  }
  if (in.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer),
        ": takes sequences [batch, steps, channels], (None, steps, c), but "
        "gets ",
        KerasShape(in)));
  }
  GG_ASSIGN_OR_RETURN(int64_t steps, Steps(layer, in, in[0], c.window[0],
                                           c.strides[0], c.padding));
  return TensorShape({steps, in[1]});
}

absl::StatusOr<Output> Pool(const WindowPoolingConfig& c, const Output& x,
                            const std::string& scope,
                            const std::vector<int64_t>& window,
                            const std::vector<int64_t>& strides) {
  ops::PoolOptions options{.name = scope + (c.max ? "/MaxPool" : "/AvgPool"),
                           .ksize = Nhwc(window),
                           .strides = Nhwc(strides),
                           .padding = absl::AsciiStrToUpper(c.padding)};
  return c.max ? ops::MaxPool(x, std::move(options))
               : ops::AvgPool(x, std::move(options));
}

absl::StatusOr<LayerOutputs> ApplyWindowPooling(const LayerState& layer,
                                                const BuiltLayer& built,
                                                const Output& x, bool) {
  const WindowPoolingConfig& c = Config(layer);
  const std::string& scope = built.name();
  if (c.spatial == 2) {
    GG_ASSIGN_OR_RETURN(Output y, Pool(c, x, scope, c.window, c.strides));
    return LayerOutputs{.pre_activation = y, .output = y};
  }
  const TensorShape& in = built.shape;
  GG_ASSIGN_OR_RETURN(TensorShape out, WindowPoolingOutputShape(layer, in));
  GG_ASSIGN_OR_RETURN(
      Output image,
      ops::Reshape(x, {-1, 1, in[0], in[1]}, {.name = scope + "/ExpandDims"}));
  GG_ASSIGN_OR_RETURN(Output pooled, Pool(c, image, scope, {1, c.window[0]},
                                          {1, c.strides[0]}));
  GG_ASSIGN_OR_RETURN(Output y, ops::Reshape(pooled, {-1, out[0], out[1]},
                                             {.name = scope + "/Squeeze"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

}  // namespace

LayerKind WindowPoolingKind(
    std::string class_name, std::string default_name, int order, int spatial,
    bool max,
    absl::StatusOr<Layer> (*read_config)(const ConfigObject& config)) {
  const bool pair = spatial == 2;
  // Keras: only MaxPooling1D and MaxPooling2D default pool_size.
  const std::string pool_default = !max ? "" : pair ? "[2, 2]" : "2";
  std::string weights_group = default_name;
  return LayerKind{
      .class_name = std::move(class_name),
      .default_name = std::move(default_name),
      .order = order,
      .weights_group = std::move(weights_group),
      .fields = {{"pool_size", pair ? "pair" : "tuple1", pool_default},
                 {"strides", pair ? "pair_or_none" : "tuple1_or_none", "null"},
                 {"padding", "str", "\"valid\""},
                 {"data_format", "str", "null"},
                 {"name", "name", "null"}},
      .write_config = WriteWindowPoolingConfig,
      .read_config = read_config,
      .output_shape = WindowPoolingOutputShape,
      .apply = ApplyWindowPooling,
  };
}

Layer MakeWindowPooling(const LayerKind& kind, int spatial, bool max,
                        const std::vector<int64_t>& pool_size,
                        const std::vector<int64_t>& strides,
                        std::string padding, std::string name) {
  auto config = std::make_unique<WindowPoolingConfig>();
  WindowPoolingConfig& c = *config;
  c.spatial = spatial;
  c.max = max;
  c.padding = std::move(padding);
  auto state = NewLayerState(kind, std::move(name), std::move(config));
  absl::Status s = SizeTuple(*state, spatial, "pool_size", pool_size, c.window);
  if (s.ok()) {
    // Keras: strides None is the pool size.
    s = strides.empty()
            ? (c.strides = c.window, absl::OkStatus())
            : SizeTuple(*state, spatial, "strides", strides, c.strides);
  }
  if (s.ok()) s = CheckPadding(*state, c.padding);
  state->error = s;
  return MakeLayer(std::move(state));
}

absl::StatusOr<Layer> ReadWindowPoolingConfig(const LayerKind& kind,
                                              int spatial, bool max,
                                              const ConfigObject& config) {
  const std::vector<int64_t> fallback(spatial, 2);
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> pool_size,
                      config.IntList("pool_size", fallback, true));
  // null strides: the pool size, as Keras.
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      config.IntList("strides", std::vector<int64_t>{}, true));
  GG_ASSIGN_OR_RETURN(std::string padding, config.String("padding", "valid"));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(config.Only("data_format", "channels_last"));
  return MakeWindowPooling(kind, spatial, max, pool_size, strides,
                           std::move(padding), std::move(name));
}

}  // namespace models_internal
}  // namespace graphgc
