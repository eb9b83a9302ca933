// Cropping1D (Keras 3's keras.layers.Cropping1D): steps cut off both ends of
// [batch, steps, channels] sequences (a Slice op); no variables
// (models/layers/padding_cropping.cc).
#include "models/layer_registry.h"
#include "models/layers/padding_cropping.h"
#include "models/spatial_layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind &Cropping1DKind();

absl::StatusOr<Layer> ReadCropping1DConfig(const ConfigObject &config) {
  return ReadPaddingCroppingConfig(Cropping1DKind(), 1, true, config);
}

const LayerKind &Cropping1DKind() {
  static const LayerKind *kind = new LayerKind(PaddingCroppingKind(
      "Cropping1D", "cropping1d", 36, 1, true, ReadCropping1DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(Cropping1DKind);
}  // namespace models_internal

namespace layers {

Layer Cropping1D(std::vector<int64_t> cropping, std::string name) {
  return models_internal::MakePaddingCropping(
      models_internal::Cropping1DKind(), 1, true, cropping, std::move(name));
}

}  // namespace layers
}  // namespace graphgc
