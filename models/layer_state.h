// models/layer_state.h
//
// LayerState: what a Layer handle shares, and the functions that check,
// build and apply layers, each dispatching through the layer's registered
// kind (models/layer_registry.h). Private to models/. A LayerState's kind,
// name and config are set by the layer's builder, before the state is
// shared, and never change. What building makes (the graph, the scope, the
// variables) is a BuiltLayer, published once and immutable after: the type, not
// a comment, is what lets code read it without the layer's lock.
//
// Shapes here are per sample (Keras's, without the batch dimension):
// Input({8, 8, 1}) gives [8, 8, 1]; messages print them Keras's way,
// "(None, 8, 8, 1)".
#ifndef GRAPHGC_MODELS_LAYER_STATE_H_
#define GRAPHGC_MODELS_LAYER_STATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gc/handle.h"
#include "models/layer.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "util/mutex.h"

namespace graphgc {
namespace models_internal {

// One variable of a layer and the nodes that read and set it.
struct Variable {
  std::string name;  // "dense_1/kernel"
  TensorShape shape;
  bool trainable = true;  // false: BatchNormalization's moving statistics
  Output handle;          // VarHandleOp
  Output read;            // ReadVariableOp
  Output assign_value;    // Placeholder fed by SetWeights
  Output assign;          // AssignVariableOp (a run target)
};

// What building a layer made: its place in one graph. Immutable once
// published (LayerState::Publish).
struct BuiltLayer {
  Graph* graph = nullptr;
  ScopeReservation scope;
  TensorShape shape;                // the per-sample input it was built for
  Output placeholder;               // Input
  std::vector<Variable> variables;  // in Keras's weight order

  // The layer's name in its graph ("dense_1").
  const std::string& name() const { return scope.name(); }
  std::string owner_label() const { return "Layer '" + scope.name() + "'"; }
};

struct LayerKind;  // models/layer_registry.h

// A kind's options, as its builder checked them: each kind's file derives
// its own config from this and only that file reads it.
struct LayerConfig {
  virtual ~LayerConfig() = default;
};

struct LayerState {
  // The registered description of the layer's kind (models/layer_registry.h);
  // never null in a state a builder made.
  using Kind = const LayerKind*;
  Kind kind = nullptr;
  std::string requested_name;
  TensorShape input_shape;  // an input layer's per-sample shape
  // The kind's options, owned by the state; null for kinds without options.
  std::unique_ptr<const LayerConfig> config;
  absl::Status error;  // bad options, reported at Create

  // Serialises building (BuildLayer, CheckLayer's view of a build in
  // progress) and guards the storage of what it made.
  Mutex mu;

  // What BuildLayer made, or nullptr while the layer is unbuilt. Once
  // non-null it never changes for the life of this state, so it is read
  // without `mu`: the acquire load sees everything BuildLayer wrote.
  const BuiltLayer* built() const {
    return built_.load(std::memory_order_acquire);
  }
  // Publishes `layer` as this state's build. Once only: BuildLayer calls it
  // under `mu` after checking built() is null.
  const BuiltLayer& Publish(std::unique_ptr<const BuiltLayer> layer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

 private:
  std::unique_ptr<const BuiltLayer> storage_ ABSL_GUARDED_BY(mu);
  std::atomic<const BuiltLayer*> built_{nullptr};
};

// Keras's class name of a kind ("Conv2D") and its default layer name
// ("conv2d").
std::string KindName(LayerState::Kind kind);
std::string DefaultName(LayerState::Kind kind);

// "Dense" or "Dense '<requested name>'", for messages about an unbuilt layer.
std::string LayerLabel(const LayerState& layer);

// A per-sample shape as Keras prints it with its batch: "(None, 6, 6, 8)".
std::string KerasShape(const TensorShape& sample_shape);

// The per-sample output shape of `layer` on per-sample inputs of shape
// `in`, or InvalidArgument naming the layer and both shapes. Pure: reads
// only the layer's options.
absl::StatusOr<TensorShape> OutputShape(const LayerState& layer,
                                        const TensorShape& in);

// Checks, without changing anything, that BuildLayer would succeed for
// per-sample inputs of shape `in`, and returns the layer's output shape: the
// options, the shapes, for an unbuilt layer that its weights' sizes neither
// overflow (InvalidArgument) nor exceed this machine's memory
// (ResourceExhausted), and for a built one that it is of `graph` and was
// built for `in`.
absl::StatusOr<TensorShape> CheckLayer(LayerState& layer, Graph& graph,
                                       const TensorShape& in);

// Builds `layer` into `graph` for per-sample inputs of shape `in` (reserves
// its name, makes and initialises its variables with `session`). No-op when
// already built for that graph and shape; an error when built elsewhere or
// for another shape.
absl::Status BuildLayer(LayerState& layer, Graph& graph, const TensorShape& in,
                        Session& session);

// Whether the layer computes something else in training steps than in
// inference (Dropout with rate > 0, BatchNormalization).
bool HasTrainingPath(const LayerState& layer);

// The forward nodes of a built layer applied to `x` (one model's use), in
// training or inference mode: the output, the pre-activation (the output
// when the layer has no activation), whether the output is a softmax of the
// pre-activation, and the nodes a training step must also run (the moving
// statistics' updates of BatchNormalization).
struct LayerOutputs {
  Output pre_activation;
  Output output;
  bool softmax = false;
  std::vector<NodeHandle> updates;
};
// FailedPrecondition for an unbuilt layer.
absl::StatusOr<LayerOutputs> ApplyLayer(const LayerState& layer,
                                        const Output& x, bool training);

// --- calls on several values (merge layers) ---

// Whether a call of `layer` may read `n` values: none for an input layer,
// one for most kinds, a list within its kind's bounds for a merge layer.
bool TakesInputCount(const LayerState& layer, size_t n);
// How many values it reads, for messages: "1", "exactly 2", "at least 1".
std::string InputCountText(const LayerState& layer);
// Whether `layer` is called on a list of values (a merge layer).
bool TakesList(const LayerState& layer);

// OutputShape on a call's per-sample inputs `in` (one each for most kinds,
// the list for a merge layer; TakesInputCount was checked). Pure.
absl::StatusOr<TensorShape> CallOutputShape(const LayerState& layer,
                                            const std::vector<TensorShape>& in);
// CheckLayer for a call on `in`: the layer's own checks against in[0] (the
// shape a merge layer is built for), then CallOutputShape.
absl::StatusOr<TensorShape> CheckLayerCall(LayerState& layer, Graph& graph,
                                           const std::vector<TensorShape>& in);
// ApplyLayer on a call's values `xs`.
absl::StatusOr<LayerOutputs> ApplyLayerCall(const LayerState& layer,
                                            const std::vector<Output>& xs,
                                            bool training);

// The number of weights of the built layer, trainable and not.
struct ParamCount {
  int64_t trainable = 0;
  int64_t non_trainable = 0;
};
// Zero for an unbuilt layer.
ParamCount CountParams(const LayerState& layer);

// --- shared by the per-kind files ---

// Creates a variable with its read, and the placeholder + assign pair that
// SetWeights and initialisation use. All handles carry `label`.
absl::StatusOr<Variable> MakeVariable(Graph& g, const std::string& name,
                                      const TensorShape& shape,
                                      const std::string& label,
                                      bool trainable = true);

// Keras's glorot_uniform for a tensor of `shape`: U(-limit, limit), limit =
// sqrt(6 / (fan_in + fan_out)); seed 0: a fresh random seed. The caller
// checked the shape (CheckFits), so fan_in + fan_out cannot overflow.
absl::StatusOr<Tensor> GlorotUniform(const TensorShape& shape, int64_t fan_in,
                                     int64_t fan_out, uint64_t seed,
                                     const std::string& what);

// Keras's RandomUniform for a tensor of `shape`: U(minval, maxval); seed 0:
// a fresh random seed.
absl::StatusOr<Tensor> RandomUniform(const TensorShape& shape, float minval,
                                     float maxval, uint64_t seed,
                                     const std::string& what);

// A tensor of `shape` filled with `value`.
absl::StatusOr<Tensor> Filled(const TensorShape& shape, float value,
                              const std::string& what);

// Assigns `values[i]` to `vars[i]` in one run of `session`.
absl::Status AssignAll(const std::vector<Variable>& vars,
                       std::vector<Tensor> values, Session& session);

// The activation `name` (linear: `x` itself) applied to x, in `scope`.
absl::StatusOr<Output> ApplyActivation(const std::string& name, const Output& x,
                                       const std::string& scope);

// Whether `name` is an activation layers know ("" is linear).
bool KnownActivation(const std::string& name);

// Whether the layer is an input layer (the first of a model, its
// placeholder).
bool IsInputLayer(const LayerState& layer);

// What Summary prints for a built layer named `name` with per-sample output
// shape `out`: its row's fields (layer and type, output shape, parameter
// count) and its parameters.
struct SummaryRow {
  std::vector<std::string> fields;
  ParamCount params;
};
SummaryRow LayerSummaryRow(const LayerState& layer, const std::string& name,
                           const TensorShape& out);

// The shapes of the variables `layer` gets on per-sample inputs `in`, as
// BuildLayer makes them; `in` is one OutputShape accepted for the layer.
std::vector<std::vector<int64_t>> VariableShapes(const LayerState& layer,
                                                 const TensorShape& in);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYER_STATE_H_
