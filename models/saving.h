// models/saving.h
//
// LoadModel: a Sequential rebuilt from a directory Sequential::Save wrote;
// LoadFunctional: the same for Functional::Save (models/functional.h);
// LoadAnyModel: either, as Keras's load_model returns the saved class.
// Save writes four files:
//
//   config.json        the architecture and compile settings, in Keras 3's
//                      JSON shape: {"module": "keras", "class_name":
//                      "Sequential", "config": {"name": ..., "layers":
//                      [{"class_name": "InputLayer", "config":
//                      {"batch_shape": [null, 10], ...}}, {"class_name":
//                      "Dense", "config": {"name": "dense", "units": 64,
//                      "activation": "relu", "use_bias": true, ...}}]},
//                      "compile_config": {"optimizer": {"class_name":
//                      "Adam", "config": {"learning_rate": 0.001, ...}},
//                      "loss": {...}, "metrics": [...]}}
//                      A Functional's is {"module":
//                      "keras.src.models.functional", "class_name":
//                      "Functional", "config": {"name", "trainable",
//                      "layers": [each with "name" and "inbound_nodes"],
//                      "input_layers", "output_layers"}, ...}: Keras 3's
//                      graph format (models/functional_config.h), a layer
//                      called twice with two nodes, a merge layer's node
//                      reading a list.
//   model.weights.h5   the weights, HDF5, in Keras 3's layout
//                      ("layers/dense/vars/0": serialize/keras_weights.h;
//                      a Functional's Input layers get Keras's empty
//                      "layers/input_layer" groups, each shared layer one
//                      group)
//   model.pb           a frozen inference GraphDef: a Placeholder input,
//                      the variables folded into Const nodes
//                      (serialize/frozen_graph.h), names as in a fresh
//                      graph ("dense", not "dense_14")
//   signature.json     {"inputs": {"x": {"name": "input:0", "dtype":
//                      "float32", "shape": [null, 10]}}, "outputs":
//                      {"predictions": {"name": "dense_1/Softmax:0", ...}}}
//
// Save writes everything into a new sibling directory and then renames it
// over `dir` (an existing `dir` is swapped out whole, and must hold only
// these files), so a reader sees the old model or the new one, never a mix.
// The optimizer's state (Adam's slots, its step count) is not saved: a
// loaded, compiled model continues training with fresh slots, as a new
// Compile would.
//
// LoadModel reads config.json and model.weights.h5 (model.pb and
// signature.json are for other tools; ReadSignature reads the latter). It
// checks the whole config before building anything, then builds the model
// on options.graph (the default graph when null), compiles it when
// options.compile and the config has compile settings, and sets its
// weights: Predict then equals the saved model's bit for bit. Errors name
// the file and what is wrong (NotFound for a missing file, DataLoss for a
// truncated or corrupt HDF5 file, InvalidArgument for a JSON field of the
// wrong type, an unknown layer class, or weights whose shapes do not match
// the config; for a Functional, a layer name used twice, an inbound node
// naming a layer not in the config, a node_index or tensor_index out of
// range, or calls that form a cycle); whatever a failed load built is
// unreferenced and goes at the
// next collection, so the graph's live nodes after it are as before.
// Files are read only if they are regular files, and bounded:
//   - config.json and signature.json: at most 16 MiB of text
//     (ResourceExhausted beyond), holding at most 2^18 JSON values nested
//     at most 64 deep (InvalidArgument beyond: parsing stops at the first
//     value over either limit);
//   - the memory budget (LoadOptions::max_bytes): from config.json alone,
//     before anything is built or model.weights.h5 is read, LoadModel
//     counts the float32 weights its layers declare (W bytes; a
//     Functional's layers each once, for their first call) and refuses,
//     with ResourceExhausted naming config.json and the budget, a model
//     whose load needs more than the budget: the weights twice (the
//     model's variables and the values read) and model.weights.h5 twice
//     (its bytes and HDF5's copy), so at least 4 W;
//   - model.weights.h5: at most W, plus W per slot of the optimizer the
//     config compiles with (Keras files may hold Adam's two slots, SGD's
//     momentum), plus 1 MiB and 64 KiB per layer of HDF5 metadata, and at
//     most what the budget leaves: a larger file is ResourceExhausted
//     naming it and the bound, before it is read;
//   - a weights file with a group under "layers" that no layer of the
//     config has is InvalidArgument (Keras's layer count mismatch); other
//     top-level groups (Keras's "optimizer") are ignored.
// Running out of memory all the same is ResourceExhausted: no function of
// this header lets std::bad_alloc escape. model.pb is written for other
// tools and never read here.
//
// Adding a layer kind: its file under models/layers/ registers it
// (models/layer_registry.h: Keras class name, weights group, config writer
// and reader); its weights are saved and loaded in the order of the layer's
// variables, so nothing here changes.
//
// Thread safety: LoadModel may be called from any thread; Save takes the
// model's lock while it reads the weights (as GetWeights), not while it
// writes files.
//
// Example:
//   GG_RETURN_IF_ERROR(model.Save("/tmp/model"));
//   GG_ASSIGN_OR_RETURN(Sequential copy, LoadModel("/tmp/model"));
//   GG_RETURN_IF_ERROR(SaveWeights(model, "/tmp/model.weights.h5"));
#ifndef GRAPHGC_MODELS_SAVING_H_
#define GRAPHGC_MODELS_SAVING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/statusor.h"
#include "models/functional.h"
#include "models/saving_types.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "serialize/graph_def.h"

namespace graphgc {

// The model saved in `dir` (see above). An empty `dir` or one holding a NUL
// byte is InvalidArgument. LoadModel takes a saved Sequential and
// LoadFunctional a saved Functional; each refuses the other kind
// (InvalidArgument naming config.json and LoadAnyModel) before reading
// the weights. LoadAnyModel returns the kind that was saved.
absl::StatusOr<Sequential> LoadModel(const std::string& dir,
                                     LoadOptions options = {});
absl::StatusOr<Functional> LoadFunctional(const std::string& dir,
                                          LoadOptions options = {});
using LoadedModel = std::variant<Sequential, Functional>;
absl::StatusOr<LoadedModel> LoadAnyModel(const std::string& dir,
                                         LoadOptions options = {});

// Writes only the model's weights to the file `path`: the bytes Save puts
// in model.weights.h5 (HDF5, Keras 3's layout, serialize/keras_weights.h),
// what Keras's `model.save_weights("x.weights.h5")` writes. Parent
// directories are created. Atomic: the file is written beside `path` and
// renamed over it, so `path` holds the old weights or the new ones. An
// empty path or one with a NUL byte is InvalidArgument; other errors name
// the model and `path`. Works from a callback of the model's own Fit.
absl::Status SaveWeights(const Sequential& model, const std::string& path);
absl::Status SaveWeights(const Functional& model, const std::string& path);

// The model's Keras JSON config, compact: what Keras's `model.to_json()`
// gives and Save writes (indented) as config.json. The TensorBoard callback
// writes it as the "keras" summary. Works from a callback of the model's
// own Fit.
absl::StatusOr<std::string> ModelToJson(const Sequential& model);
absl::StatusOr<std::string> ModelToJson(const Functional& model);
// The same with the model's and its layers' names renamed as `renaming`
// (serialize/graph_def.h) renames a GraphDef's scopes: the TensorBoard
// callback writes the config beside a graph exported with local scope names.
absl::StatusOr<std::string> ModelToJson(const Sequential& model,
                                        const ScopeRenaming& renaming);

// Reads `dir`/signature.json; errors name the file and the field (a shape
// whose element count overflows is InvalidArgument).
absl::StatusOr<Signature> ReadSignature(const std::string& dir);

// Parses `json` as config.json's text (`file` names it in statuses) and
// sums up the model it describes, refusing, as LoadModel, a load over
// `max_bytes` (<= 0: no budget). Builds nothing.
absl::StatusOr<ModelConfigSummary> ParseModelConfig(
    std::string_view json, const std::string& file,
    int64_t max_bytes = kDefaultLoadBudget);

// Parses `json` as signature.json's text (`file` names it in statuses), as
// ReadSignature does.
absl::StatusOr<Signature> ParseSignature(std::string_view json,
                                         const std::string& file);

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SAVING_H_
