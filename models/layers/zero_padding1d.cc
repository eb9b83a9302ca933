// ZeroPadding1D (Keras 3's keras.layers.ZeroPadding1D): zeros before and after
// the steps of [batch, steps, channels] sequences (a Pad op); no variables
// (models/layers/padding_cropping.cc).
#include "models/layer_registry.h"
#include "models/layers/padding_cropping.h"
#include "models/spatial_layers.h"

namespace graphgc {
namespace models_internal {
namespace {

const LayerKind &ZeroPadding1DKind();

absl::StatusOr<Layer> ReadZeroPadding1DConfig(const ConfigObject &config) {
  return ReadPaddingCroppingConfig(ZeroPadding1DKind(), 1, false, config);
}

const LayerKind &ZeroPadding1DKind() {
  static const LayerKind *kind =
      new LayerKind(PaddingCroppingKind("ZeroPadding1D", "zero_padding1d", 34,
                                        1, false, ReadZeroPadding1DConfig));
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(ZeroPadding1DKind);
}  // namespace models_internal

namespace layers {

Layer ZeroPadding1D(std::vector<int64_t> padding, std::string name) {
  return models_internal::MakePaddingCropping(
      models_internal::ZeroPadding1DKind(), 1, false, padding, std::move(name));
}

}  // namespace layers
}  // namespace graphgc
