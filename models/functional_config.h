// models/functional_config.h
//
// config.json's graph of a Functional, in Keras 3's shape
// (keras/src/models/functional.py, get_config and functional_from_config):
// each layer entry carries its "name" and "inbound_nodes", one node per
// call of the layer in the model, in call order:
//
//   {"args": [<tensor>], "kwargs": {}}            most layers
//   {"args": [[<tensor>, <tensor>]], "kwargs": {}}  a merge layer's list
//   <tensor> = {"class_name": "__keras_tensor__", "config": {"shape":
//               [null, 8], "dtype": "float32", "keras_history":
//               [layer_name, node_index, tensor_index]}}
//
// An Input layer's node is implicit (node 0, "inbound_nodes": []). The
// model's "input_layers" and "output_layers" are [layer_name, node_index,
// tensor_index] triples: one triple for a model of one input (Keras's
// Model(x, y)), else a list of them.
//
// Reading is for untrusted files: every field is type-checked; a layer
// name used twice, a reference to a layer not in "layers", a node_index
// past the layer's nodes, a tensor_index other than 0 (graphgc's layers
// have one output) and nodes whose inputs form a cycle are InvalidArgument
// naming the file, the layer entry and the field. Work is linear in the
// number of nodes and references (no recursion). Private to models/.
#ifndef GRAPHGC_MODELS_FUNCTIONAL_CONFIG_H_
#define GRAPHGC_MODELS_FUNCTIONAL_CONFIG_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/functional.h"
#include "models/keras_json.h"
#include "models/layers.h"
#include "models/saving_access.h"
#include "serialize/scope_renaming.h"

namespace graphgc {
namespace models_internal {

// A Functional's graph as its config describes it, rebuilt as symbolic
// calls (models/functional.h): nothing is built.
struct FunctionalGraph {
  // The config's layers, in its order; Input layers are replaced by the
  // layers of the Input() values made for them.
  std::vector<Layer> layers;
  std::vector<KerasTensor> inputs;
  std::vector<KerasTensor> outputs;
  // For each of `layers`, the per-sample shape its weights are made for
  // (its first call's first input), for the load budget.
  std::vector<TensorShape> weights_input_shapes;
};

// Rebuilds the calls of `layers` (made from config["layers"][i]["config"],
// in order) from `entries` (config["layers"]) and `config`'s
// "input_layers" and "output_layers"; `file` names the file in statuses.
absl::StatusOr<FunctionalGraph> ReadFunctionalGraph(const ConfigObject& config,
                                                    const Json& entries,
                                                    std::vector<Layer> layers,
                                                    const std::string& file);

// Keras's order of the Functional's layers (its model.layers, as
// keras/src/ops/function.py's map_graph makes it): deepest first, counting
// depth from the outputs (a layer as deep as its deepest call), ties in the
// order a depth-first walk from the outputs first reaches them. Indices
// into snap.layers. The config lists the layers, and the weights file
// names their groups, in this order, so that Keras, which rebuilds the
// model and orders its layers this way, finds each layer's weights under
// the group it expects.
std::vector<size_t> KerasLayerOrder(const ModelSnapshot& snap);

// The Functional's Keras config (class_name "Functional"), its names as
// `renaming` has them; the layers in KerasLayerOrder.
Json FunctionalConfigJson(const ModelSnapshot& snap,
                          const ScopeRenaming& renaming);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_FUNCTIONAL_CONFIG_H_
