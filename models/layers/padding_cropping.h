// models/layers/padding_cropping.h
//
// What ZeroPadding1D, ZeroPadding2D, Cropping1D and Cropping2D share:
// Keras's amounts (one value, one per spatial axis, or a (before, after)
// pair per spatial axis), config, output shape and forward nodes. Padding
// runs TensorFlow's Pad op, cropping its Slice op (whose gradients are each
// other), on channels_last inputs.
#ifndef GRAPHGC_MODELS_LAYERS_PADDING_CROPPING_H_
#define GRAPHGC_MODELS_LAYERS_PADDING_CROPPING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/layer_registry.h"

namespace graphgc {
namespace models_internal {

// The kind of a padding (`crop` false) or cropping class over `spatial`
// (1 or 2) axes; `read_config` is the kind's own, calling
// ReadPaddingCroppingConfig.
LayerKind PaddingCroppingKind(
    std::string class_name, std::string default_name, int order, int spatial,
    bool crop,
    absl::StatusOr<Layer> (*read_config)(const ConfigObject &config));

// A layer of `kind`. `amounts`: 1 value (every side), `spatial` values (both
// sides of each axis) or 2 * `spatial` values (before and after of each
// axis), each >= 0.
Layer MakePaddingCropping(const LayerKind &kind, int spatial, bool crop,
                          const std::vector<int64_t> &amounts,
                          std::string name);

absl::StatusOr<Layer> ReadPaddingCroppingConfig(const LayerKind &kind,
                                                int spatial, bool crop,
                                                const ConfigObject &config);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYERS_PADDING_CROPPING_H_
