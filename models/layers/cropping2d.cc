// Cropping2D (Keras 3's keras.layers.Cropping2D): rows and columns cut off the
// edges of NHWC images (TensorFlow's Slice op); no variables
// (models/layers/padding_cropping.cc).
#include "models/layer_registry.h"
#include "models/layers/padding_cropping.h"
#include "models/spatial_layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind &Cropping2DKind();

absl::StatusOr<Layer> ReadCropping2DConfig(const ConfigObject &config) {
  return ReadPaddingCroppingConfig(Cropping2DKind(), 2, true, config);
}

const LayerKind &Cropping2DKind() {
  static const LayerKind *kind = new LayerKind(PaddingCroppingKind(
      "Cropping2D", "cropping2d", 35, 2, true, ReadCropping2DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(Cropping2DKind);
}  // namespace models_internal

namespace layers {

Layer Cropping2D(std::vector<int64_t> cropping, std::string name) {
  return models_internal::MakePaddingCropping(
      models_internal::Cropping2DKind(), 2, true, cropping, std::move(name));
}

}  // namespace layers
}  // namespace graphgc
