// GlobalAveragePooling1D (Keras 3's keras.layers.GlobalAveragePooling1D): the
// mean over the steps of [batch, steps, channels] inputs, per channel; no
// variables (models/layers/global_pooling.cc).
#include "models/layer_registry.h"
#include "models/layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind& GlobalAveragePooling1DKind();

absl::StatusOr<Layer> ReadGlobalAveragePooling1DConfig(
    const ConfigObject& config) {
  return ReadGlobalPoolingConfig(GlobalAveragePooling1DKind(), 1, false,
                                 config);
}

const LayerKind& GlobalAveragePooling1DKind() {
  static const LayerKind* kind = new LayerKind(
      GlobalPoolingKind("GlobalAveragePooling1D", "global_average_pooling1d",
                        13, ReadGlobalAveragePooling1DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(GlobalAveragePooling1DKind);
}  // namespace models_internal

namespace layers {

Layer GlobalAveragePooling1D(GlobalPoolingOptions options) {
  return models_internal::MakeGlobalPooling(
      models_internal::GlobalAveragePooling1DKind(), 1, false,
      std::move(options));
}

}  // namespace layers
}  // namespace graphgc
