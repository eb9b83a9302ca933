// What the four global pooling kinds (global_average_pooling1d.cc,
// global_average_pooling2d.cc, global_max_pooling1d.cc,
// global_max_pooling2d.cc) share: Keras 3's BaseGlobalPooling over
// channels_last inputs. The mean is a Mean over the spatial axes; the max is
// one MaxPool window covering them (a 1-D input seen as a height-1 image),
// whose gradient ops/ has.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct GlobalPoolingConfig : LayerConfig {
  int spatial = 2;  // pooled axes: 1 (steps) or 2 (height, width)
  bool max = false;
  bool keepdims = false;
};

const GlobalPoolingConfig& Config(const LayerState& layer) {
  return ConfigOf<GlobalPoolingConfig>(layer);
}

Json WriteGlobalPoolingConfig(const LayerState& layer,
                              const std::string& name) {
  Json c = CommonConfig(name);
  c["data_format"] = "channels_last";
  c["keepdims"] = Config(layer).keepdims;
  return c;
}

// Keras's InputSpec(ndim=spatial + 2) check, then (C,), or with keepdims
// (1, C) / (1, 1, C).
absl::StatusOr<TensorShape> GlobalPoolingOutputShape(const LayerState& layer,
                                                     const TensorShape& in) {
  const GlobalPoolingConfig& c = Config(layer);
  if (in.dims() != c.spatial + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer),
                     ": Input 0 is incompatible with the layer: expected ndim=",
                     c.spatial + 2, ", found ndim=", in.dims() + 1,
                     ". Full shape received: ", KerasShape(in)));
  }
  std::vector<int64_t> out;
  if (c.keepdims) out.assign(c.spatial, 1);
  out.push_back(in[in.dims() - 1]);
  return TensorShape(out);
}

absl::StatusOr<LayerOutputs> ApplyGlobalPooling(const LayerState& layer,
                                                const BuiltLayer& built,
                                                const Output& x, bool) {
  const GlobalPoolingConfig& c = Config(layer);
  const std::string& scope = built.name();
  const TensorShape& in = built.shape;
  const int64_t channels = in[in.dims() - 1];
  Output y;
  if (!c.max) {
    std::vector<int64_t> axes = {1};
    if (c.spatial == 2) axes.push_back(2);
    GG_ASSIGN_OR_RETURN(y, ops::Mean(x, {.name = scope + "/Mean",
                                         .axes = std::move(axes),
                                         .keep_dims = c.keepdims}));
    return LayerOutputs{.pre_activation = y, .output = y};
  }
  Output images = x;
  int64_t h = 1, w = in[0];
  if (c.spatial == 2) {
    h = in[0];
    w = in[1];
  } else {
    GG_ASSIGN_OR_RETURN(images, ops::Reshape(x, {-1, 1, w, channels},
                                             {.name = scope + "/ExpandDims"}));
  }
  GG_ASSIGN_OR_RETURN(y, ops::MaxPool(images, {.name = scope + "/MaxPool",
                                               .ksize = {1, h, w, 1},
                                               .strides = {1, 1, 1, 1},
                                               .padding = "VALID"}));
  std::vector<int64_t> out = {-1};
  if (c.keepdims) out.insert(out.end(), c.spatial, 1);
  out.push_back(channels);
  if (c.spatial == 2 && c.keepdims) {
    return LayerOutputs{.pre_activation = y, .output = y};
  }
  GG_ASSIGN_OR_RETURN(
      y, ops::Reshape(y, std::move(out), {.name = scope + "/Reshape"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

}  // namespace

LayerKind GlobalPoolingKind(
    std::string class_name, std::string default_name, int order,
    absl::StatusOr<Layer> (*read_config)(const ConfigObject& config)) {
  std::string group = default_name;
  return LayerKind{
      .class_name = std::move(class_name),
      .default_name = std::move(default_name),
      .order = order,
      .weights_group = std::move(group),
      .fields = {{"data_format", "str", "null"},
                 {"keepdims", "bool", "false"},
                 {"name", "name", "null"}},
      .write_config = WriteGlobalPoolingConfig,
      .read_config = read_config,
      .output_shape = GlobalPoolingOutputShape,
      .apply = ApplyGlobalPooling,
  };
}

Layer MakeGlobalPooling(const LayerKind& kind, int spatial, bool max,
                        GlobalPoolingOptions options) {
  auto config = std::make_unique<GlobalPoolingConfig>();
  config->spatial = spatial;
  config->max = max;
  config->keepdims = options.keepdims;
  return MakeLayer(
      NewLayerState(kind, std::move(options.name), std::move(config)));
}

absl::StatusOr<Layer> ReadGlobalPoolingConfig(const LayerKind& kind,
                                              int spatial, bool max,
                                              const ConfigObject& config) {
  GG_RETURN_IF_ERROR(config.Only("data_format", "channels_last"));
  GG_ASSIGN_OR_RETURN(const bool keepdims, config.Bool("keepdims", false));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return MakeGlobalPooling(kind, spatial, max,
                           {.keepdims = keepdims, .name = std::move(name)});
}

}  // namespace models_internal
}  // namespace graphgc
