// models/layer_state.h
//
// LayerState: what a Layer handle shares, and the per-kind functions that
// check, build and apply layers. Private to models/. A LayerState's option
// fields are set by the layer's builder, before the state is shared, and
// never change. What building makes (the graph, the scope, the variables)
// is a BuiltLayer, published once and immutable after: the type, not a
// comment, is what lets code read it without the layer's lock.
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
#include "models/layers.h"
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

struct LayerState {
  enum class Kind {
    kInput,
    kDense,
    kConv2D,
    kMaxPooling2D,
    kFlatten,
    kDropout,
    kBatchNormalization,
    kReshape,
    kActivation,
  };
  Kind kind = Kind::kDense;
  std::string requested_name;
  TensorShape input_shape;  // Input
  int64_t units = 0;        // Dense units, Conv2D filters
  DenseOptions dense;
  std::vector<int64_t> window;   // Conv2D kernel, MaxPooling2D pool: [h, w]
  std::vector<int64_t> strides;  // Conv2D, MaxPooling2D: [h, w]
  std::string padding;           // Conv2D, MaxPooling2D: "valid" / "same"
  Conv2DOptions conv;
  Pooling2DOptions pool;
  float rate = 0;     // Dropout
  uint64_t seed = 0;  // Dropout: never 0 (a drawn seed when given 0)
  BatchNormalizationOptions batch_norm;
  TensorShape target_shape;  // Reshape
  std::string activation;    // Dense, Conv2D, Activation: the activation
  absl::Status error;        // bad options, reported at Create

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

// A tensor of `shape` filled with `value`.
absl::StatusOr<Tensor> Filled(const TensorShape& shape, float value,
                              const std::string& what);

// The kernel of `kernel_shape` (last dimension `units`) and, with
// `use_bias`, a bias of [units], as Dense and Conv2D make them: variables
// "<scope>/kernel" and "<scope>/bias" appended to `vars`, initialised in one
// run, kernel glorot_uniform over `fan_in` and `fan_out` (seed 0: a fresh
// random seed), bias zeros.
struct KernelSpec {
  TensorShape kernel_shape;
  int64_t fan_in = 0;
  int64_t fan_out = 0;
  bool use_bias = true;
  uint64_t seed = 0;
};
absl::Status BuildKernelAndBias(const KernelSpec& spec, Graph& graph,
                                const std::string& scope, Session& session,
                                std::vector<Variable>& vars);

// Assigns `values[i]` to `vars[i]` in one run of `session`.
absl::Status AssignAll(const std::vector<Variable>& vars,
                       std::vector<Tensor> values, Session& session);

// The activation `name` (linear: `x` itself) applied to x, in `scope`.
absl::StatusOr<Output> ApplyActivation(const std::string& name, const Output& x,
                                       const std::string& scope);

// Whether `name` is an activation layers know ("" is linear).
bool KnownActivation(const std::string& name);

// Per-kind builders, in conv_layers.cc and core_layers.cc. Each is called
// with the layer's mutex held, after CheckLayer passed.
absl::Status BuildConv2D(LayerState& layer, Graph& graph, const TensorShape& in,
                         const std::string& scope, Session& session,
                         std::vector<Variable>& vars);
absl::Status BuildBatchNormalization(Graph& graph, const TensorShape& in,
                                     const std::string& scope, Session& session,
                                     std::vector<Variable>& vars);
absl::StatusOr<TensorShape> Conv2DOutputShape(const LayerState& layer,
                                              const TensorShape& in);
absl::StatusOr<TensorShape> MaxPooling2DOutputShape(const LayerState& layer,
                                                    const TensorShape& in);
absl::StatusOr<TensorShape> BatchNormalizationOutputShape(
    const LayerState& layer, const TensorShape& in);
absl::StatusOr<TensorShape> ReshapeOutputShape(const LayerState& layer,
                                               const TensorShape& in);
// Per-kind forward nodes, for ApplyLayer: `built` is `layer`'s build.
absl::StatusOr<LayerOutputs> ApplyConv2D(const LayerState& layer,
                                         const BuiltLayer& built,
                                         const Output& x);
absl::StatusOr<LayerOutputs> ApplyMaxPooling2D(const LayerState& layer,
                                               const BuiltLayer& built,
                                               const Output& x);
absl::StatusOr<LayerOutputs> ApplyBatchNormalization(const LayerState& layer,
                                                     const BuiltLayer& built,
                                                     const Output& x,
                                                     bool training);
absl::StatusOr<LayerOutputs> ApplyDropout(const LayerState& layer,
                                          const BuiltLayer& built,
                                          const Output& x, bool training);
absl::StatusOr<LayerOutputs> ApplyReshape(const BuiltLayer& built,
                                          const Output& x,
                                          const TensorShape& out);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYER_STATE_H_
