// MaxPooling1D (Keras 3's keras.layers.MaxPooling1D): the max of each window of
// [batch, steps, channels] sequences (a MaxPool op over them as height-1
// images); no variables (models/layers/window_pooling.cc).
#include "models/layer_registry.h"
#include "models/layers/window_pooling.h"
#include "models/spatial_layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind& MaxPooling1DKind();

absl::StatusOr<Layer> ReadMaxPooling1DConfig(const ConfigObject& config) {
  return ReadWindowPoolingConfig(MaxPooling1DKind(), 1, true, config);
}

const LayerKind& MaxPooling1DKind() {
  static const LayerKind* kind = new LayerKind(WindowPoolingKind(
      "MaxPooling1D", "max_pooling1d", 31, 1, true, ReadMaxPooling1DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(MaxPooling1DKind);
}  // namespace models_internal

namespace layers {

Layer MaxPooling1D(int64_t pool_size, Pooling1DOptions options) {
  return models_internal::MakeWindowPooling(
      models_internal::MaxPooling1DKind(), 1, true, {pool_size},
      options.strides, std::move(options.padding), std::move(options.name));
}

}  // namespace layers
}  // namespace graphgc
