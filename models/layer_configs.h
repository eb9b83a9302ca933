// models/layer_configs.h
//
// The per-layer part of config.json and model.weights.h5: each layer kind's
// Keras class name, weights group name, and "config" writer and reader (the
// LayerKind table in models/layer_configs.cc), and the shapes of the
// variables a layer declares (VariableShapes, for the load budget). Private
// to models/; the rest of saving reaches layer kinds only through these.
#ifndef GRAPHGC_MODELS_LAYER_CONFIGS_H_
#define GRAPHGC_MODELS_LAYER_CONFIGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/keras_json.h"
#include "models/layer_state.h"
#include "models/layers.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

// To save and load a new kind, add one entry to kLayerKinds
// (models/layer_configs.cc): a config writer and a config reader.
struct LayerKind {
  // Keras's class name, as Layer::kind() returns it: "Dense".
  const char* class_name;
  // The base name of its weights group in model.weights.h5 ("dense"), as
  // Keras 3 names it: its class name in snake case. Null for a layer Keras
  // keeps out of Sequential.layers (InputLayer), which has no group.
  const char* weights_group;
  // The layer's Keras "config" object; `name` is its name in the graph.
  Json (*write_config)(const LayerState& layer, const std::string& name);
  // An unbuilt layer made from a "config" object through its public
  // factory. Bad values the factory checks are reported by
  // Sequential::Create; this checks field types.
  absl::StatusOr<Layer> (*read_config)(const Object& config);
};

// The kind whose class name is `class_name`, or null.
const LayerKind* FindKind(const std::string& class_name);

// The known class names, comma-separated, for messages.
std::string KnownKinds();

// The weights group of each layer ("layers/dense", "layers/dense_1"), empty
// for a layer without one: Keras's names, uniqued per model in layer order.
std::vector<std::string> WeightsPaths(const std::vector<Layer>& layers);

// The shapes of the variables `layer` gets on per-sample inputs `in`, as
// BuildLayer makes them; `in` is one OutputShape accepted for the layer.
std::vector<std::vector<int64_t>> VariableShapes(const LayerState& layer,
                                                 const TensorShape& in);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYER_CONFIGS_H_
