// ZeroPadding2D (Keras 3's keras.layers.ZeroPadding2D): zeros around the height
// and width of NHWC images (TensorFlow's Pad op); no variables
// (models/layers/padding_cropping.cc).
#include "models/layer_registry.h"
#include "models/layers/padding_cropping.h"
#include "models/spatial_layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind &ZeroPadding2DKind();

absl::StatusOr<Layer> ReadZeroPadding2DConfig(const ConfigObject &config) {
  return ReadPaddingCroppingConfig(ZeroPadding2DKind(), 2, false, config);
}

const LayerKind &ZeroPadding2DKind() {
  static const LayerKind *kind =
      new LayerKind(PaddingCroppingKind("ZeroPadding2D", "zero_padding2d", 33,
                                        2, false, ReadZeroPadding2DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(ZeroPadding2DKind);
}  // namespace models_internal

namespace layers {

Layer ZeroPadding2D(std::vector<int64_t> padding, std::string name) {
  return models_internal::MakePaddingCropping(
      models_internal::ZeroPadding2DKind(), 2, false, padding, std::move(name));
}

}  // namespace layers
}  // namespace graphgc
