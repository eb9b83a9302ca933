// models/layer_state.h
//
// LayerState: what a Layer handle shares. Private to models/. Fields after
// `built` are set once, by Build(), under `mu`, and never change after.
#ifndef GRAPHGC_MODELS_LAYER_STATE_H_
#define GRAPHGC_MODELS_LAYER_STATE_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "models/layers.h"
#include "runtime/graph.h"
#include "runtime/session.h"

namespace graphgc {
namespace models_internal {

// One trainable variable of a layer and the nodes that read and set it.
struct Variable {
  std::string name;  // "dense_1/kernel"
  TensorShape shape;
  Output handle;        // VarHandleOp
  Output read;          // ReadVariableOp
  Output assign_value;  // Placeholder fed by SetWeights
  Output assign;        // AssignVariableOp (a run target)
};

struct LayerState {
  enum class Kind { kInput, kDense };
  Kind kind = Kind::kDense;
  std::string requested_name;
  TensorShape input_shape;  // Input
  int64_t units = 0;        // Dense
  DenseOptions dense;
  absl::Status error;  // bad options, reported at Create

  std::mutex mu;
  bool built = false;
  Graph* graph = nullptr;
  ScopeReservation scope;
  int64_t input_dim = 0;            // Dense: the feature count it was built for
  Output placeholder;               // Input
  std::vector<Variable> variables;  // Dense: kernel, then bias

  std::string owner_label() const { return "Layer '" + scope.name() + "'"; }
};

// "Dense" or "Dense '<requested name>'", for messages about an unbuilt layer.
std::string DenseLabel(const LayerState& layer);

// Builds `layer` into `graph` for inputs of `input_dim` features (Dense) and
// initialises its variables with `session`. No-op when already built for
// that graph and size; an error when built elsewhere or for another size.
absl::Status BuildLayer(LayerState& layer, Graph& graph, int64_t input_dim,
                        Session& session);

// Checks, without changing anything, that BuildLayer would succeed: for an
// unbuilt Dense layer, also that its kernel's size neither overflows
// (InvalidArgument) nor exceeds this machine's memory (ResourceExhausted).
absl::Status CheckLayer(LayerState& layer, Graph& graph, int64_t input_dim);

// The forward nodes of a built Dense layer applied to `x` (one model's
// use): the pre-activation and the activation's output.
struct DenseOutputs {
  Output pre_activation;
  Output output;
};
absl::StatusOr<DenseOutputs> ApplyDense(LayerState& layer, const Output& x);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYER_STATE_H_
