// models/layers.h
//
// Layer, layers::Input and layers::Dense: Keras-style layers as copyable
// handles (a copy is the same layer, like a Python reference).
//
// A layer is built into a graph the first time a Sequential uses it: it
// then reserves its Keras-style name in that graph ("dense", "dense_1",
// ...: the first name no live layer or node uses; a name is free again once
// its layer is dropped and a collection swept its nodes) and creates its
// variables there, initialised as Keras does (Dense kernel glorot_uniform,
// bias zeros). The layer holds its variables with handles labelled
// "Layer '<name>'", so they live while any copy of the layer, or any model
// using it, lives; several models of one graph may share a layer and train
// the same variables.
//
// A default-constructed or moved-from Layer is empty: kind() and name() are
// "", built() is false, units() is 0, and Sequential::Create refuses it
// with InvalidArgument.
//
// Thread safety: a Layer may be copied and used from several threads; its
// build is guarded by its own mutex.
//
// Example:
//   Layer hidden = layers::Dense(64, {.activation = "relu"});
#ifndef GRAPHGC_MODELS_LAYERS_H_
#define GRAPHGC_MODELS_LAYERS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/tensor.h"

namespace graphgc {

struct DenseOptions {
  std::string activation = "linear";  // linear, relu, sigmoid, tanh, softmax
  bool use_bias = true;
  std::string name;   // empty: "dense", uniqued in the graph
  uint64_t seed = 0;  // kernel initialiser seed; 0: a fresh random seed
};

namespace models_internal {
struct LayerState;
struct SavingAccess;
}  // namespace models_internal

class Layer {
 public:
  Layer() = default;

  // "InputLayer" or "Dense"; empty for a default-constructed Layer.
  std::string kind() const;
  // The name in its graph once built ("dense_1"), else the requested name
  // (possibly empty).
  std::string name() const;
  bool built() const;
  // Units of a Dense layer; the feature count of an Input layer.
  int64_t units() const;

  friend bool operator==(const Layer& a, const Layer& b) {
    return a.state_ == b.state_;
  }

 private:
  friend class Sequential;
  friend struct models_internal::SavingAccess;  // models/saving.cc
  friend Layer MakeLayer(std::shared_ptr<models_internal::LayerState>);
  explicit Layer(std::shared_ptr<models_internal::LayerState> state)
      : state_(std::move(state)) {}
  std::shared_ptr<models_internal::LayerState> state_;
};

namespace layers {

// The model's input: `shape` leaves out the batch dimension, as in Keras
// (Input({10}) takes [batch, 10]). Only rank-1 shapes are supported by
// Dense stacks; Sequential::Create says so otherwise.
Layer Input(TensorShape shape, std::string name = "");

// A densely connected layer: activation(x @ kernel + bias). Bad options
// (units < 1, an unknown activation) are reported by Sequential::Create.
Layer Dense(int64_t units, DenseOptions options = {});

}  // namespace layers
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYERS_H_
