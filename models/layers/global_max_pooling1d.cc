// GlobalMaxPooling1D (Keras 3's keras.layers.GlobalMaxPooling1D): the max over
// the steps of [batch, steps, channels] inputs, per channel; no variables
// (models/layers/global_pooling.cc).
#include "models/layer_registry.h"
#include "models/layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind& GlobalMaxPooling1DKind();

absl::StatusOr<Layer> ReadGlobalMaxPooling1DConfig(const ConfigObject& config) {
  return ReadGlobalPoolingConfig(GlobalMaxPooling1DKind(), 1, true, config);
}

const LayerKind& GlobalMaxPooling1DKind() {
  static const LayerKind* kind = new LayerKind(
      GlobalPoolingKind("GlobalMaxPooling1D", "global_max_pooling1d", 14,
                        ReadGlobalMaxPooling1DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(GlobalMaxPooling1DKind);
}  // namespace models_internal

namespace layers {

Layer GlobalMaxPooling1D(GlobalPoolingOptions options) {
  return models_internal::MakeGlobalPooling(
      models_internal::GlobalMaxPooling1DKind(), 1, true, std::move(options));
}

}  // namespace layers
}  // namespace graphgc
