// GlobalMaxPooling2D (Keras 3's keras.layers.GlobalMaxPooling2D): the max over
// the height and width of NHWC images, per channel; no variables
// (models/layers/global_pooling.cc).
#include "models/layer_registry.h"
#include "models/layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind& GlobalMaxPooling2DKind();

absl::StatusOr<Layer> ReadGlobalMaxPooling2DConfig(const ConfigObject& config) {
  return ReadGlobalPoolingConfig(GlobalMaxPooling2DKind(), 2, true, config);
}

const LayerKind& GlobalMaxPooling2DKind() {
  static const LayerKind* kind = new LayerKind(
      GlobalPoolingKind("GlobalMaxPooling2D", "global_max_pooling2d", 12,
                        ReadGlobalMaxPooling2DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(GlobalMaxPooling2DKind);
}  // namespace models_internal

namespace layers {

Layer GlobalMaxPooling2D(GlobalPoolingOptions options) {
  return models_internal::MakeGlobalPooling(
      models_internal::GlobalMaxPooling2DKind(), 2, true, std::move(options));
}

}  // namespace layers
}  // namespace graphgc
