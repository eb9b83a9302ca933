// GlobalAveragePooling2D (Keras 3's keras.layers.GlobalAveragePooling2D): the
// mean over the height and width of NHWC images, per channel; no variables
// (models/layers/global_pooling.cc).
#include "models/layer_registry.h"
#include "models/layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind& GlobalAveragePooling2DKind();

absl::StatusOr<Layer> ReadGlobalAveragePooling2DConfig(
    const ConfigObject& config) {
  return ReadGlobalPoolingConfig(GlobalAveragePooling2DKind(), 2, false,
                                 config);
}

const LayerKind& GlobalAveragePooling2DKind() {
  static const LayerKind* kind = new LayerKind(
      GlobalPoolingKind("GlobalAveragePooling2D", "global_average_pooling2d",
                        11, ReadGlobalAveragePooling2DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(GlobalAveragePooling2DKind);
}  // namespace models_internal

namespace layers {

Layer GlobalAveragePooling2D(GlobalPoolingOptions options) {
  return models_internal::MakeGlobalPooling(
      models_internal::GlobalAveragePooling2DKind(), 2, false,
      std::move(options));
}

}  // namespace layers
}  // namespace graphgc
