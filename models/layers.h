// models/layers.h
//
// Layer and the layers:: builders (Input, Dense, Conv2D, MaxPooling2D,
// Flatten, Dropout, BatchNormalization, Reshape, Activation, Embedding):
// Keras-style layers as copyable handles (a copy is the same layer, like a
// Python reference). Images are NHWC: [batch, height, width, channels].
//
// A layer is built into a graph the first time a Sequential uses it: it
// then reserves its Keras-style name in that graph ("dense", "dense_1",
// ...: the first name no live layer or node uses; a name is free again once
// its layer is dropped and a collection swept its nodes) and creates its
// variables there, initialised as Keras does (Dense and Conv2D kernels
// glorot_uniform, biases zeros; BatchNormalization gamma ones, beta and
// moving_mean zeros, moving_variance ones). The layer holds its variables with
// handles labelled "Layer '<name>'", so they live while any copy of the layer,
// or any model using it, lives; several models of one graph may share a layer
// and train the same variables.
//
// A default-constructed or moved-from Layer is empty: kind() and name() are
// "", built() is false, units() is 0, and Sequential::Create refuses it
// with InvalidArgument.
//
// Thread safety: a Layer may be copied and used from several threads; its
// build is guarded by its own mutex.
//
// Shapes are checked when Sequential::Create stacks the layers: a layer
// that cannot take its input's shape is refused there, naming the layer and
// both shapes ("Dense 'dense': takes [batch, features] but gets (None, 6, 6,
// 8); put a Flatten before it"). Dense takes rank-2 inputs only; Conv2D and
// MaxPooling2D rank-4 (NHWC); BatchNormalization rank 2 (normalising each
// feature) or rank 4 (each channel).
//
// Training and inference: Dropout and BatchNormalization behave differently
// in a training step (Fit) than in Evaluate and Predict; Sequential builds
// the two forward paths (see models/sequential.h). Weights, in Keras's
// order: Dense and Conv2D kernel then bias; BatchNormalization gamma, beta,
// moving_mean, moving_variance (the last two are not trainable).
//
// Example:
//   Layer hidden = layers::Dense(64, {.activation = "relu"});
//   Layer conv = layers::Conv2D(8, {3, 3}, {.activation = "relu"});
#ifndef GRAPHGC_MODELS_LAYERS_H_
#define GRAPHGC_MODELS_LAYERS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/layer.h"
#include "runtime/tensor.h"

namespace graphgc {

struct DenseOptions {
  std::string activation = "linear";  // linear, relu, sigmoid, tanh, softmax
  bool use_bias = true;
  std::string name;   // empty: "dense", uniqued in the graph
  uint64_t seed = 0;  // kernel initialiser seed; 0: a fresh random seed
};

// Keras's Conv2D options. strides: one or two values >= 1; padding "valid"
// or "same".
struct Conv2DOptions {
  std::vector<int64_t> strides = {1, 1};
  std::string padding = "valid";      // or "same"
  std::string activation = "linear";  // as DenseOptions::activation
  bool use_bias = true;
  std::string name;   // empty: "conv2d", uniqued in the graph
  uint64_t seed = 0;  // kernel initialiser seed; 0: a fresh random seed
};

// Keras's MaxPooling2D options.
struct Pooling2DOptions {
  std::vector<int64_t> strides;   // empty: = pool_size
  std::string padding = "valid";  // or "same"
  std::string name;               // empty: "max_pooling2d", uniqued
};

// Keras's BatchNormalization options: in training, moving = moving *
// momentum + batch * (1 - momentum); momentum in [0, 1], epsilon > 0.
struct BatchNormalizationOptions {
  float momentum = 0.99f;
  float epsilon = 1e-3f;
  std::string name;  // empty: "batch_normalization", uniqued
};

// Keras's Embedding options. embeddings_initializer: "uniform" (Keras's
// RandomUniform(-0.05, 0.05)) only; mask_zero true is refused
// (Unimplemented) by Sequential::Create.
struct EmbeddingOptions {
  std::string embeddings_initializer = "uniform";
  bool mask_zero = false;
  std::string name;   // empty: "embedding", uniqued in the graph
  uint64_t seed = 0;  // embeddings initialiser seed; 0: a fresh random seed
};

// Keras's global pooling options (data_format channels_last only):
// keepdims keeps the pooled axes as size 1.
struct GlobalPoolingOptions {
  bool keepdims = false;
  std::string name;  // empty: the class's snake-case name, uniqued
};

namespace layers {

// The model's input: `shape` leaves out the batch dimension, as in Keras
// (Input({10}) takes [batch, 10], Input({8, 8, 1}) [batch, 8, 8, 1]). Every
// dimension must be known and >= 1; Sequential::Create says so otherwise.
Layer Input(TensorShape shape, std::string name = "");

// A densely connected layer: activation(x @ kernel + bias). Bad options
// (units < 1, an unknown activation) are reported by Sequential::Create.
Layer Dense(int64_t units, DenseOptions options = {});

// A 2-D convolution over NHWC images (TensorFlow's Conv2D op): kernel
// [kh, kw, in_channels, filters], then bias and activation. kernel_size:
// one value (square) or two, each >= 1; filters >= 1.
Layer Conv2D(int64_t filters, std::vector<int64_t> kernel_size,
             Conv2DOptions options = {});

// Max pooling over NHWC images (TensorFlow's MaxPool op). pool_size: one
// value (square) or two, each >= 1.
Layer MaxPooling2D(std::vector<int64_t> pool_size,
                   Pooling2DOptions options = {});

// [batch, d1, d2, ...] to [batch, d1 * d2 * ...] (a Reshape op).
Layer Flatten(std::string name = "");

// In training steps, zeroes each element with probability `rate` and scales
// the rest by 1 / (1 - rate); in Evaluate and Predict, the identity. rate in
// [0, 1). The masks come from a RandomUniform node seeded with `seed` (0: a
// seed drawn when the layer is made), so two models built with the same
// seeds and fit with the same FitOptions::seed train identically.
Layer Dropout(float rate, std::string name = "");
Layer Dropout(float rate, std::string name, uint64_t seed);

// Normalises each feature (rank-2 input) or channel (rank-4 NHWC input)
// with FusedBatchNormV3: the batch's statistics in training steps (and
// moving averages updated with `momentum`), the moving averages in Evaluate
// and Predict. A rank-2 input is reshaped to [batch, 1, 1, features] around
// the op (TensorFlow's op is 4-D only); other ranks are refused.
Layer BatchNormalization(BatchNormalizationOptions options = {});

// [batch, ...] to [batch, target_shape...] (a Reshape op). target_shape
// leaves out the batch dimension; one dimension may be -1 (inferred).
Layer Reshape(TensorShape target_shape, std::string name = "");

// Applies an activation (linear, relu, sigmoid, tanh, softmax).
Layer Activation(std::string activation, std::string name = "");

// Turns integer ids into rows of a trainable [input_dim, output_dim]
// matrix: per-sample input shape S gives S + [output_dim]. Float inputs are
// cast to int32 (truncated), as Keras does; an id outside [0, input_dim) is
// InvalidArgument from the run that feeds it. input_dim, output_dim >= 1.
Layer Embedding(int64_t input_dim, int64_t output_dim,
                EmbeddingOptions options = {});

// Global pooling over channels_last inputs, per channel: the mean or the
// max over height and width of [batch, h, w, c] (the 2D kinds) or over the
// steps of [batch, steps, c] (the 1D kinds), giving [batch, c] ([batch, 1,
// 1, c] / [batch, 1, c] with keepdims). Another rank is refused by
// Sequential::Create with Keras's "expected ndim=" message.
Layer GlobalAveragePooling2D(GlobalPoolingOptions options = {});
Layer GlobalMaxPooling2D(GlobalPoolingOptions options = {});
Layer GlobalAveragePooling1D(GlobalPoolingOptions options = {});
Layer GlobalMaxPooling1D(GlobalPoolingOptions options = {});

// Merge layers (Keras's), called on a list of values in a functional model
// (models/functional.h): elementwise over inputs of one shape, where a
// dimension of 1 broadcasts (Subtract takes exactly two inputs, the others
// at least one), or joined along `axis` (Concatenate, with ConcatV2; the
// axis counts the batch, so -1 is the last and 0 joins batches). Shape
// errors are reported by Functional::Create with Keras's messages.
Layer Add(std::string name = "");
Layer Subtract(std::string name = "");
Layer Multiply(std::string name = "");
Layer Average(std::string name = "");
Layer Maximum(std::string name = "");
Layer Minimum(std::string name = "");
Layer Concatenate(int64_t axis = -1, std::string name = "");

// A layer of any registered kind (the ones above and every kind of
// models/layers/, e.g. "LeakyReLU") made from its Keras config object, as
// LoadModel reads config.json's layers: FromConfig("LeakyReLU",
// R"({"negative_slope": 0.2})"). InvalidArgument for an unknown class,
// text that is no JSON object, or a field of the wrong type; bad values are
// reported by Sequential::Create, as for the builders.
absl::StatusOr<Layer> FromConfig(const std::string& class_name,
                                 const std::string& config_json);

// What the Python classes are generated from: each registered kind's Keras
// class name, the name a layer of it gets when given none ("dense"), and
// its keyword arguments (name; how Python converts it,
// models/layer_registry.h ConfigField; its default as JSON text, empty when
// required), in the registry's listing order.
struct LayerFieldInfo {
  std::string name;
  std::string python;
  std::string default_json;
};
struct LayerKindInfo {
  std::string class_name;
  std::string default_name;
  std::vector<LayerFieldInfo> fields;
};
std::vector<LayerKindInfo> RegisteredKinds();

}  // namespace layers
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYERS_H_
