// AveragePooling1D (Keras 3's keras.layers.AveragePooling1D): the mean of each
// window of [batch, steps, channels] sequences (an AvgPool op over them as
// height-1 images); no variables (models/layers/window_pooling.cc).
#include "models/layer_registry.h"
#include "models/layers/window_pooling.h"
#include "models/spatial_layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind& AveragePooling1DKind();

absl::StatusOr<Layer> ReadAveragePooling1DConfig(const ConfigObject& config) {
  return ReadWindowPoolingConfig(AveragePooling1DKind(), 1, false, config);
}

const LayerKind& AveragePooling1DKind() {
  static const LayerKind* kind = new LayerKind(
      WindowPoolingKind("AveragePooling1D", "average_pooling1d", 32, 1, false,
                        ReadAveragePooling1DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(AveragePooling1DKind);
}  // namespace models_internal

namespace layers {

Layer AveragePooling1D(int64_t pool_size, Pooling1DOptions options) {
  return models_internal::MakeWindowPooling(
      models_internal::AveragePooling1DKind(), 1, false, {pool_size},
      options.strides, std::move(options.padding), std::move(options.name));
}

}  // namespace layers
}  // namespace graphgc
