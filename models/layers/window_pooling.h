// models/layers/window_pooling.h
//
// What the window pooling kinds (average_pooling2d.cc, max_pooling1d.cc,
// average_pooling1d.cc) share: Keras's fields (pool_size, strides, padding,
// data_format), config, output shape and forward nodes. 2-D layers run
// MaxPool or AvgPool on NHWC images; 1-D layers run them on the
// [batch, steps, channels] sequence reshaped to [batch, 1, steps, channels]
// and reshape the result back, as Keras's TensorFlow backend does.
#ifndef GRAPHGC_MODELS_LAYERS_WINDOW_POOLING_H_
#define GRAPHGC_MODELS_LAYERS_WINDOW_POOLING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/layer_registry.h"

namespace graphgc {
namespace models_internal {

// The kind of a window pooling class over `spatial` (1 or 2) axes, the max
// when `max`; `read_config` is the kind's own, calling
// ReadWindowPoolingConfig.
LayerKind WindowPoolingKind(
    std::string class_name, std::string default_name, int order, int spatial,
    bool max, absl::StatusOr<Layer> (*read_config)(const ConfigObject& config));

// A layer of `kind`: the max of each window when `max`, else the mean.
// `pool_size` and `strides` hold 1 or `spatial` values (strides empty: the
// pool size).
Layer MakeWindowPooling(const LayerKind& kind, int spatial, bool max,
                        const std::vector<int64_t>& pool_size,
                        const std::vector<int64_t>& strides,
                        std::string padding, std::string name);

absl::StatusOr<Layer> ReadWindowPoolingConfig(const LayerKind& kind,
                                              int spatial, bool max,
                                              const ConfigObject& config);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYERS_WINDOW_POOLING_H_
