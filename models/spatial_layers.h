// models/spatial_layers.h
//
// Keras 3's spatial layers beyond layers.h: window pooling
// (AveragePooling2D, MaxPooling1D, AveragePooling1D), zero padding and
// cropping (ZeroPadding2D, ZeroPadding1D, Cropping2D, Cropping1D),
// UpSampling2D, Conv1D and Conv2DTranspose, each registered by its own file
// under models/layers/ and usable in Sequential and Functional models as the
// layers of layers.h. channels_last only. Bad arguments are reported by
// Sequential::Create (InvalidArgument naming the layer and the argument).
//
// Thread safety: as layers.h.
#ifndef GRAPHGC_MODELS_SPATIAL_LAYERS_H_
#define GRAPHGC_MODELS_SPATIAL_LAYERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "models/layers.h"

namespace graphgc {

// Keras's 1-D pooling options: strides one value >= 1 (empty: = pool_size).
struct Pooling1DOptions {
  std::vector<int64_t> strides;
  std::string padding = "valid";  // or "same"
  std::string name;               // empty: the class's snake-case name
};

// Keras's Conv1D options (as Conv2DOptions, one stride).
struct Conv1DOptions {
  int64_t strides = 1;
  std::string padding = "valid";      // "same", or "causal" (k - 1 in front)
  std::string activation = "linear";  // as DenseOptions::activation
  bool use_bias = true;
  std::string name;   // empty: "conv1d", uniqued in the graph
  uint64_t seed = 0;  // kernel initialiser seed; 0: a fresh random seed
};

// Keras's Conv2DTranspose options: Conv2D's (the name, when empty, is
// "conv2d_transpose", uniqued in the graph). Keras's output_padding (None
// only), data_format (channels_last) and dilation_rate (1) have only their
// defaults.
using Conv2DTransposeOptions = Conv2DOptions;

namespace layers {

// Average pooling over NHWC images (TensorFlow's AvgPool op). pool_size:
// one value (square) or two, each >= 1. With padding "same", each window
// averages only the pixels inside the image, as Keras.
Layer AveragePooling2D(std::vector<int64_t> pool_size,
                       Pooling2DOptions options = {});

// Max and average pooling over [batch, steps, channels] sequences, as
// Keras's TensorFlow backend computes them: the 2-D op over the sequence
// seen as a height-1 image. pool_size >= 1.
Layer MaxPooling1D(int64_t pool_size = 2, Pooling1DOptions options = {});
Layer AveragePooling1D(int64_t pool_size, Pooling1DOptions options = {});

// Zeros around the height and width of NHWC images (TensorFlow's Pad op).
// padding: 1 value (every side), 2 (height, width: both sides of each) or
// 4 (top, bottom, left, right), each >= 0.
Layer ZeroPadding2D(std::vector<int64_t> padding = {1}, std::string name = "");
// Zeros before and after the steps: 1 value (both ends) or 2 (left, right).
Layer ZeroPadding1D(std::vector<int64_t> padding = {1}, std::string name = "");
// Rows and columns cut off the edges (TensorFlow's Slice op), in the forms
// of ZeroPadding2D's padding; what is left must be at least 1 x 1.
Layer Cropping2D(std::vector<int64_t> cropping = {0}, std::string name = "");
// Steps cut off both ends, in the forms of ZeroPadding1D's padding.
Layer Cropping1D(std::vector<int64_t> cropping = {1}, std::string name = "");

// Each pixel repeated size[0] times down and size[1] times across (one
// value: both). interpolation "nearest" only: Keras's others are refused
// (Unimplemented).
Layer UpSampling2D(std::vector<int64_t> size = {2, 2},
                   std::string interpolation = "nearest",
                   std::string name = "");

// A 1-D convolution over [batch, steps, channels] sequences: kernel
// [kernel_size, in_channels, filters], then bias and activation (Keras's
// TensorFlow backend: Conv2D over the sequence as a height-1 image).
Layer Conv1D(int64_t filters, int64_t kernel_size, Conv1DOptions options = {});

// The transpose of Conv2D over NHWC images (Keras's TensorFlow backend:
// TensorFlow's Conv2DBackpropInput with the inputs as out_backprop): kernel
// [kh, kw, filters, in_channels], then bias and activation. Each output
// side is (in - 1) * stride + max(kernel, stride) with padding "valid",
// in * stride with "same", as Keras computes it.
Layer Conv2DTranspose(int64_t filters, std::vector<int64_t> kernel_size,
                      Conv2DTransposeOptions options = {});

}  // namespace layers
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SPATIAL_LAYERS_H_
