// models/layer_registry.h
//
// The layer registry: one LayerKind per Keras layer class, each defined and
// registered by its own file under models/layers/ (dense.cc, conv2d.cc, ...)
// with GG_REGISTER_LAYER_KIND. Everything that differs between kinds is
// here: the Keras class and default names, the builder's keyword arguments
// (the Python classes are generated from them), the config.json codec, the
// weights, the output shape, the forward nodes and the Summary row. The
// functions of models/layer_state.h (CheckLayer, BuildLayer, ApplyLayer,
// ...) and saving dispatch through the kind a LayerState points to; nothing
// else looks at a layer's kind.
//
// Adding a layer kind: one file models/layers/<kind>.cc defining a config
// struct (derived from LayerConfig), a LayerKind and its functions, and
// registering it; the Bazel target globs models/layers/*.cc.
//
// Thread safety: kinds register during static initialisation; the registry
// is read-only afterwards and may be read from any thread.
#ifndef GRAPHGC_MODELS_LAYER_REGISTRY_H_
#define GRAPHGC_MODELS_LAYER_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/keras_json.h"
#include "models/layer.h"
#include "models/layer_state.h"
#include "models/layers.h"
#include "ops/ops.h"

namespace graphgc {

// The Layer handle of a new state (a friend of Layer, in models/layers.cc).
Layer MakeLayer(std::shared_ptr<models_internal::LayerState> state);

namespace models_internal {

// One keyword argument of a kind's Python class, which is also the key of
// its config.json field read by the kind's read_config.
struct ConfigField {
  std::string name;  // "units"
  // How Python converts the argument before the config is read: "int32"
  // (an integer, named in errors "<Class>: <name>"), "int", "pair" (an int
  // or a tuple of two), "pair_or_none", "shape" (a tuple of ints), "float",
  // "float_or_none", "axis" (an int or a list of ints), "bool", "str",
  // "activation" (a name or None), "seed" (None or an integer in [0,
  // 2**64)), "name" (None or a string).
  std::string python;
  // The default as JSON text ("true", "[1, 1]", "null"); empty: required.
  std::string default_json;
};

// How a variable is initialised. kOrthogonal: Keras's Orthogonal (gain 1)
// of a 2-D shape with `seed`; kUnitForgetBias: zeros with ones in the second
// quarter of a 1-D shape (an LSTM bias with unit_forget_bias).
enum class Initializer {
  kGlorotUniform,
  kRandomUniform,
  kZeros,
  kOnes,
  kOrthogonal,
  kUnitForgetBias
};

// One variable a kind makes, in Keras's weight order.
struct WeightSpec {
  std::string name;  // "kernel": the variable is "<layer>/kernel"
  TensorShape shape;
  bool trainable = true;
  Initializer init = Initializer::kZeros;
  // kGlorotUniform: the fans and the seed (0: a fresh random seed); fans of
  // 0 mean the shape was too large to count them (BuildLayer refuses).
  int64_t fan_in = 0;
  int64_t fan_out = 0;
  uint64_t seed = 0;
  // kRandomUniform: U(minval, maxval) with `seed` (0: a fresh random seed).
  float minval = -0.05f;
  float maxval = 0.05f;
};

struct LayerKind {
  // Keras's class name, as Layer::kind() returns it: "Dense".
  std::string class_name;
  // The name a layer gets when given none ("dense", uniqued in the graph).
  std::string default_name;
  // Where the kind is listed ("known: InputLayer, Dense, ..."): by this,
  // then by class name.
  int order = 100;
  // Only an input layer starts a model and is built into a placeholder.
  bool is_input = false;
  // How messages name the kind (LayerLabel); empty: class_name.
  std::string label;
  // The base name of its weights group in model.weights.h5 ("dense"), as
  // Keras 3 names it: its class name in snake case. Empty for a layer Keras
  // keeps out of Sequential.layers (InputLayer), which has no group.
  std::string weights_group;
  // The subgroup holding the variables ("cell": "layers/lstm/cell/vars/0"),
  // as Keras's recurrent layers keep them in their cell. Empty: none.
  std::string weights_subgroup;
  // The Python class's keyword arguments, in order.
  std::vector<ConfigField> fields;

  // The layer's Keras "config" object; `name` is its name in the graph.
  Json (*write_config)(const LayerState& layer,
                       const std::string& name) = nullptr;
  // An unbuilt layer made from a "config" object through the kind's
  // builder. Bad values the builder checks are reported by
  // Sequential::Create; this checks field types.
  absl::StatusOr<Layer> (*read_config)(const ConfigObject& config) = nullptr;
  // The per-sample output shape on per-sample inputs `in`, or
  // InvalidArgument naming the layer and both shapes. Null: `in`.
  absl::StatusOr<TensorShape> (*output_shape)(const LayerState& layer,
                                              const TensorShape& in) = nullptr;
  // The variables on inputs `in` (an accepted input shape). Null: none.
  std::vector<WeightSpec> (*weights)(const LayerState& layer,
                                     const TensorShape& in) = nullptr;
  // Before an unbuilt layer is built: that its largest weight fits
  // (CheckFits), naming the layer. Null: nothing to check.
  absl::Status (*check_weights)(const LayerState& layer,
                                const TensorShape& in) = nullptr;
  // Why a layer built for per-sample inputs `built` cannot take `in`; null:
  // the generic message.
  std::string (*rebuilt_message)(const std::string& name,
                                 const TensorShape& built,
                                 const TensorShape& in) = nullptr;
  // The forward nodes of the built layer on `x` (see ApplyLayer). Null: the
  // layer has none (an input layer).
  absl::StatusOr<LayerOutputs> (*apply)(const LayerState& layer,
                                        const BuiltLayer& built,
                                        const Output& x,
                                        bool training) = nullptr;
  // Whether training steps compute something else than inference. Null:
  // false.
  bool (*has_training_path)(const LayerState& layer) = nullptr;
  // Layer::units(). Null: 0.
  int64_t (*units)(const LayerState& layer) = nullptr;
  // The Summary row's fields; null: "<name> (<class_name>)", the output
  // shape, the parameter count.
  std::vector<std::string> (*summary_fields)(
      const LayerState& layer, const std::string& name, const TensorShape& out,
      const ParamCount& params) = nullptr;

  // A kind called on a list of values (a merge layer) sets these three;
  // every other kind reads one value through output_shape and apply.
  // The list's length: at least min_inputs, at most max_inputs (0: no
  // bound).
  int min_inputs = 0;
  int max_inputs = 0;
  // The per-sample output shape on per-sample inputs `in` (as many as the
  // bounds allow), or InvalidArgument naming the layer and the shapes.
  absl::StatusOr<TensorShape> (*list_output_shape)(
      const LayerState& layer, const std::vector<TensorShape>& in) = nullptr;
  // The forward nodes of the built layer on `xs` (accepted shapes).
  absl::StatusOr<LayerOutputs> (*list_apply)(const LayerState& layer,
                                             const BuiltLayer& built,
                                             const std::vector<Output>& xs,
                                             bool training) = nullptr;
};

// The registered kind of Keras class `class_name`, or null.
const LayerKind* FindLayerKind(const std::string& class_name);

// Every registered kind, in listing order.
std::vector<const LayerKind*> LayerKinds();

// "InputLayer, Dense, ...": the registered class names, in listing order.
std::string KnownKinds();

// The kinds of models/layers/*.cc: the build generates this function
// (models/gen_builtin_kinds.sh) from their GG_REGISTER_LAYER_KIND
// lines, so each kind is linked into every program that uses the registry,
// a static library's consumers included. The registry holds them from its
// first use.
std::vector<const LayerKind*> BuiltinLayerKinds();

// Registers the kind `fn()` returns (a reference to a function-local static
// LayerKind). Written once per file of models/layers/, at namespace
// models_internal scope outside any anonymous namespace: it defines the
// function BuiltinLayerKinds() calls.
#define GG_REGISTER_LAYER_KIND(fn)                                            \
  const ::graphgc::models_internal::LayerKind* GgRegisteredLayerKind_##fn();  \
  const ::graphgc::models_internal::LayerKind* GgRegisteredLayerKind_##fn() { \
    return &(fn)();                                                           \
  }                                                                           \
  static_assert(true, "")

// --- for the kinds' files ---

// A new state of `kind` named `name` (empty: the default name once built)
// holding `config`.
std::shared_ptr<LayerState> NewLayerState(const LayerKind& kind,
                                          std::string name,
                                          std::unique_ptr<LayerConfig> config);

// The kind's config of `layer`: the kind's own file made it, so it is a T.
template <typename T>
const T& ConfigOf(const LayerState& layer) {
  return static_cast<const T&>(*layer.config);
}

// InvalidArgument "<label>: unknown activation '<act>' (use ...)".
absl::Status UnknownActivation(const LayerState& layer, const std::string& act);

// A Keras size pair ("kernel_size", "strides", ...): one value (used for
// both) or two, each >= 1; `out` gets [h, w].
absl::Status SizePair(const LayerState& layer, const std::string& what,
                      const std::vector<int64_t>& given,
                      std::vector<int64_t>& out);

// OK for "valid" and "same", else InvalidArgument naming the layer.
absl::Status CheckPadding(const LayerState& layer, const std::string& padding);

// The spatial output size [h, w, channels] of a 2-D window (`window`,
// `strides`: [h, w]) over NHWC per-sample inputs `in`, as TensorFlow
// computes it; `window_name` ("kernel", "pool") names it in messages.
absl::StatusOr<TensorShape> WindowOutputShape(
    const LayerState& layer, const TensorShape& in,
    const std::vector<int64_t>& window, const std::vector<int64_t>& strides,
    const std::string& padding, const std::string& window_name,
    int64_t channels);

// [1, h, w, 1] of an [h, w] pair, for Conv2D's and MaxPool's attributes.
std::vector<int64_t> Nhwc(const std::vector<int64_t>& hw);

// The output of `x` reshaped to per-sample `out` (a Reshape node
// "<layer>/Reshape").
absl::StatusOr<LayerOutputs> ApplyReshape(const BuiltLayer& built,
                                          const Output& x,
                                          const TensorShape& out);

// The activation of a Dense-like layer applied to its pre-activation `y`.
absl::StatusOr<LayerOutputs> ActivationOutputs(const std::string& activation,
                                               const Output& y,
                                               const std::string& scope);

// The Keras spelling of an activation ("" is "linear", "swish" is "silu").
// The activations by name, with ActivationName and UnknownActivation, are
// models/layers/activations.cc's.
std::string ActivationName(const std::string& activation);

// keras.activations.elu(x, alpha) and leaky_relu(x, negative_slope), for the
// ELU, ReLU and LeakyReLU kinds: nodes "<scope>/...".
absl::StatusOr<Output> EluActivation(const Output& x, float alpha,
                                     const std::string& scope);
absl::StatusOr<Output> LeakyReluActivation(const Output& x, float slope,
                                           const std::string& scope);

// --- merge layers (models/layers/add.cc, concatenate.cc, ...) ---

// The per-sample shapes `in` as Keras prints a list of them:
// "[(None, 8), (None, 4)]".
std::string KerasShapes(const std::vector<TensorShape>& in);

// The output shape of an elementwise merge (Add, Subtract, ...) as Keras
// computes it: inputs of one rank whose dimensions agree or are 1 (which
// broadcasts). InvalidArgument with Keras's messages otherwise.
absl::StatusOr<TensorShape> ElementwiseMergeShape(
    const LayerState& layer, const std::vector<TensorShape>& in);

// `xs` folded left with `op` (op(op(x0, x1), x2) ...), each node named
// "<scope>/<op_name>", "<scope>/<op_name>_1", ...
absl::StatusOr<Output> FoldInputs(
    const std::vector<Output>& xs, const std::string& scope,
    const std::string& op_name,
    absl::StatusOr<Output> (*op)(const Output&, const Output&, ops::OpOptions));

// A merge kind's config (just its name) and the layer read from one.
Json MergeConfig(const LayerState& layer, const std::string& name);
absl::StatusOr<std::string> MergeConfigName(const ConfigObject& config);

// --- global pooling (models/layers/global_pooling.cc) ---

// The kind of a global pooling class (GlobalAveragePooling2D, ...): Keras's
// fields (data_format, keepdims, name), config, output shape and forward
// nodes, shared; `read_config` is the kind's own, calling
// ReadGlobalPoolingConfig with the kind.
LayerKind GlobalPoolingKind(
    std::string class_name, std::string default_name, int order,
    absl::StatusOr<Layer> (*read_config)(const ConfigObject& config));
// A layer of `kind` pooling `spatial` axes (1 or 2) of channels_last
// inputs: the max when `max`, else the mean.
Layer MakeGlobalPooling(const LayerKind& kind, int spatial, bool max,
                        GlobalPoolingOptions options);
absl::StatusOr<Layer> ReadGlobalPoolingConfig(const LayerKind& kind,
                                              int spatial, bool max,
                                              const ConfigObject& config);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYER_REGISTRY_H_
