// models/saving_access.h
//
// SavingAccess: what saving (models/saving.cc and the codecs beside it)
// needs of a model's and a layer's private state, and nothing more: the
// ModelSnapshot a model fills and the weights it takes back. Private to
// models/ (a friend of Layer, Sequential and Functional); Snapshot and
// AssignWeights are defined in sequential.cc, beside the model's state,
// and work on a Sequential handle on either kind of model (a Functional's
// engine handle: Handle). It knows the models by name only, so
// sequential.cc includes it without a cycle.
#ifndef GRAPHGC_MODELS_SAVING_ACCESS_H_
#define GRAPHGC_MODELS_SAVING_ACCESS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/layer_state.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/model_graph.h"
#include "models/optimizers.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {

class Functional;
class Sequential;

namespace models_internal {

// One layer as Save writes it: its state, its build and copies of its
// variables' values, in the order of BuiltLayer::variables.
struct SavedLayer {
  Layer layer;  // keeps `state` and `built` alive
  const LayerState* state = nullptr;
  const BuiltLayer* built = nullptr;  // never null: a model's layers are built
  std::vector<Tensor> values;
};

// A compiled model's settings, as its CompileOptions (models/sequential.h)
// hold them.
struct SavedCompile {
  Optimizer optimizer;
  Loss loss;
  std::vector<std::string> metrics;
};

// Everything Save writes, read at once under the model's lock.
struct ModelSnapshot {
  std::string name;
  std::string class_name;  // "Sequential" or "Functional"
  // Each layer once (Keras's model.layers): Sequential's stack, or a
  // Functional's layers in the order of their first call, Input layers
  // included.
  std::vector<SavedLayer> layers;
  // The layer calls, inputs and outputs (models/model_graph.h) and each
  // call's per-sample value shape: what a Functional's config records.
  ModelGraph graph;
  std::vector<TensorShape> call_shapes;
  bool compiled = false;
  SavedCompile compile;  // when compiled
  Output input;
  Output output;
  // The variables' values by VarHandleOp node name, for freezing.
  std::map<std::string, Tensor> variables;
  // When compiled: Keras's optimizer.variables (iterations int64, the
  // learning rate, the slots), in Keras's order (models/optimizer_state.h).
  std::vector<Tensor> optimizer_values;
};

struct SavingAccess {
  static const LayerState* State(const Layer& layer) {
    return layer.state_.get();
  }
  // The model's snapshot; FailedPrecondition for a moved-from model.
  static absl::StatusOr<ModelSnapshot> Snapshot(const Sequential& model);
  // The engine's handle on a Functional (a Sequential on the same state),
  // through which Snapshot and AssignWeights reach it; defined in
  // functional.cc.
  static Sequential Handle(const Functional& model);
  // Sets every variable of every layer (each layer once), in layer order and
  // each layer's variables in order, from `values` (taken as they are: no
  // copy), all or none; InvalidArgument naming `where` for a count, dtype or
  // shape that differs.
  static absl::Status AssignWeights(Sequential& model,
                                    std::vector<Tensor> values,
                                    const std::string& where);
  // The dtype and shape of each of the compiled model's optimizer
  // variables, in Keras's order (empty when not compiled); defined in
  // optimizer_state.cc.
  static absl::StatusOr<std::vector<std::pair<DataType, TensorShape>>>
  OptimizerSpec(const Sequential& model);
  // Sets the optimizer variables from `values` (as OptimizerSpec lists
  // them, checked by the caller), and the step powers derived from the
  // iteration count; defined in optimizer_state.cc.
  static absl::Status AssignOptimizerState(Sequential& model,
                                           const std::vector<Tensor>& values);
};

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SAVING_ACCESS_H_
