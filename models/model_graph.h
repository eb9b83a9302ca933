// models/model_graph.h
//
// ModelGraph: what a model is, apart from how it is trained: a graph of
// layer calls from the model's inputs to its outputs. Private to models/.
// Each LayerCall applies one layer to the outputs of earlier calls; the
// model's inputs are calls of Input layers (which read nothing) and its
// outputs are the outputs of some calls. Inputs and outputs are lists:
// Sequential's graph (LinearGraph) has one of each, a chain in which call i
// reads call i - 1. The training engine (models/engine.h) builds a model's
// forward paths, its training step and its Fit from a ModelGraph, whatever
// builder made it.
//
// A layer call's value is the per-sample output of its layer; shapes here
// are per sample, as in models/layer_state.h.
#ifndef GRAPHGC_MODELS_MODEL_GRAPH_H_
#define GRAPHGC_MODELS_MODEL_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/layer_state.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

// One layer applied to the values of earlier calls.
struct LayerCall {
  std::shared_ptr<LayerState> layer;
  // Positions in ModelGraph::calls of the calls whose values it reads, each
  // before this call; empty for an Input layer.
  std::vector<int> inputs;
};

struct ModelGraph {
  std::vector<LayerCall> calls;  // in an order where inputs come first
  std::vector<int> inputs;       // the model's inputs: calls of Input layers
  std::vector<int> outputs;      // the calls whose values the model outputs
};

// The chain of `layers` (the first an Input): call i reads call i - 1; one
// input (call 0) and one output (the last call). Checks nothing.
ModelGraph LinearGraph(std::vector<std::shared_ptr<LayerState>> layers);

// Checks the graph's structure, naming `where` and the call: every call has
// a layer; an Input layer's call reads nothing and is one of the model's
// inputs, any other call reads as many earlier calls as its layer takes
// (one for most layers, a list for a merge layer: TakesInputCount); inputs
// and outputs are non-empty, each a call, none twice. InvalidArgument
// otherwise.
absl::Status CheckModelGraph(const ModelGraph& model, const std::string& where);

// The shapes call `call`'s layer is applied to: its own Input shape for an
// Input layer, else the value shapes of the calls it reads, in order.
std::vector<TensorShape> CallInputShapes(const ModelGraph& model,
                                         const std::vector<TensorShape>& values,
                                         int call);

// Checks every call's layer against `graph` and its input's shape (in call
// order, with CheckLayerCall: nothing is built or changed) and returns each
// call's value shape; an error names "<where>: layer <call>". The graph's
// structure was checked (CheckModelGraph).
absl::StatusOr<std::vector<TensorShape>> CheckCalls(const ModelGraph& model,
                                                    Graph& graph,
                                                    const std::string& where);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_MODEL_GRAPH_H_
