// models/layers/conv_config.h
//
// What the convolution kinds (conv1d.cc, conv2d.cc, conv2d_transpose.cc)
// share: the fields of their Keras config, reading the options graphgc
// implements one value of, the 2-D layers' config and builder, and the
// kernel and bias.
#ifndef GRAPHGC_MODELS_LAYERS_CONV_CONFIG_H_
#define GRAPHGC_MODELS_LAYERS_CONV_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/keras_json.h"
#include "models/layer_registry.h"
#include "models/layer_state.h"
#include "models/layers.h"

namespace graphgc {
namespace models_internal {

// Writes Keras's activation, use_bias, the glorot_uniform kernel and zeros
// bias initializers, and null regularizers and constraints into `c`.
void WriteConvTail(Json& c, const std::string& activation, bool use_bias);

// Refuses a data_format other than channels_last and a dilation_rate other
// than 1 (`ones`: its Keras tuple of 1s, e.g. [1, 1]), naming the field.
absl::Status CheckConvDefaults(const ConfigObject& config, const Json& ones);

// The config of a Conv2D or a Conv2DTranspose layer.
struct Conv2DLayerConfig : LayerConfig {
  int64_t filters = 0;
  std::vector<int64_t> window;   // [h, w]
  std::vector<int64_t> strides;  // [h, w]
  Conv2DOptions options;
};

// A layer of `kind` (Conv2D's or Conv2DTranspose's), its arguments checked
// (filters >= 1, the size pairs kernel_size and strides, padding,
// activation) into the layer's error, which Sequential::Create reports.
Layer MakeConv2DLayer(const LayerKind& kind, int64_t filters,
                      const std::vector<int64_t>& kernel_size,
                      Conv2DOptions options);

// Layer::units() of either: its filters.
int64_t Conv2DLayerFilters(const LayerState& layer);

// What Conv2D's and Conv2DTranspose's configs share: filters, kernel_size,
// strides, padding, activation, use_bias, name and the builder's seed (not
// in Keras's config: its seed is the initializer's), read for the builder
// to check.
struct Conv2DArguments {
  int64_t filters = 0;
  std::vector<int64_t> kernel_size;
  Conv2DOptions options;
};
absl::StatusOr<Conv2DArguments> ReadConv2DArguments(const ConfigObject& config);

// The kernel of shape `kernel` (glorot_uniform with `seed`, its fans as
// Keras's compute_fans: the window's size times the second-last and the
// last axis) and, when `use_bias`, the zero bias of `filters`. Fans of 0
// say "too large" (see WeightSpec).
std::vector<WeightSpec> ConvWeights(const std::vector<int64_t>& kernel,
                                    int64_t filters, bool use_bias,
                                    uint64_t seed);

// That the kernel of shape `kernel` fits (CheckFits), naming the layer, its
// filters and the input channels.
absl::Status CheckConvKernelFits(const LayerState& layer,
                                 const std::vector<int64_t>& kernel,
                                 int64_t filters, int64_t in_channels);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYERS_CONV_CONFIG_H_
