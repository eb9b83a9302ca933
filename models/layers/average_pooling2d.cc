// AveragePooling2D (Keras 3's keras.layers.AveragePooling2D): the mean of each
// window of NHWC images (TensorFlow's AvgPool op); no variables
// (models/layers/window_pooling.cc).
#include "models/layer_registry.h"
#include "models/layers/window_pooling.h"
#include "models/spatial_layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind& AveragePooling2DKind();

absl::StatusOr<Layer> ReadAveragePooling2DConfig(const ConfigObject& config) {
  return ReadWindowPoolingConfig(AveragePooling2DKind(), 2, false, config);
}

const LayerKind& AveragePooling2DKind() {
  static const LayerKind* kind = new LayerKind(
      WindowPoolingKind("AveragePooling2D", "average_pooling2d", 30, 2, false,
                        ReadAveragePooling2DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(AveragePooling2DKind);
}  // namespace models_internal

namespace layers {

Layer AveragePooling2D(std::vector<int64_t> pool_size,
                       Pooling2DOptions options) {
  return models_internal::MakeWindowPooling(
      models_internal::AveragePooling2DKind(), 2, false, pool_size,
      options.strides, std::move(options.padding), std::move(options.name));
}

}  // namespace layers
}  // namespace graphgc
