// models/layer.h
//
// Layer: the copyable handle on one layer (models/layers.h makes them and
// says what they do). Its own header so that what layers are built with
// (models/layer_state.h, models/layer_registry.h) names the handle without
// the builders above it.
#ifndef GRAPHGC_MODELS_LAYER_H_
#define GRAPHGC_MODELS_LAYER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace graphgc {

class KerasTensor;  // models/functional.h

namespace models_internal {
struct LayerState;
struct SavingAccess;
struct SymbolicAccess;
}  // namespace models_internal

class Layer {
 public:
  Layer() = default;

  // Keras's class name: "InputLayer", "Dense", "Conv2D", "MaxPooling2D",
  // "Flatten", "Dropout", "BatchNormalization", "Reshape", "Activation";
  // empty for a default-constructed Layer.
  std::string kind() const;
  // The name in its graph once built ("dense_1"), else the requested name
  // (possibly empty).
  std::string name() const;
  bool built() const;
  // Units of a Dense layer, filters of a Conv2D; the feature count of a
  // rank-1 Input layer (-1 for another rank); 0 for the other layers.
  int64_t units() const;

  // Calls the layer on symbolic values (models/functional.h): on one value,
  // or on a list of values for a merge layer (layers::Add, ...). Builds
  // nothing; a refused call gives a KerasTensor holding the error.
  KerasTensor operator()(const KerasTensor& x) const;
  KerasTensor operator()(const std::vector<KerasTensor>& xs) const;

  friend bool operator==(const Layer& a, const Layer& b) {
    return a.state_ == b.state_;
  }

 private:
  friend class Sequential;
  friend struct models_internal::SavingAccess;    // models/saving.cc
  friend struct models_internal::SymbolicAccess;  // models/functional.cc
  friend Layer MakeLayer(std::shared_ptr<models_internal::LayerState>);
  explicit Layer(std::shared_ptr<models_internal::LayerState> state)
      : state_(std::move(state)) {}
  std::shared_ptr<models_internal::LayerState> state_;
};

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYER_H_
