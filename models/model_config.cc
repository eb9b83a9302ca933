#include "models/model_config.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "models/compile_config.h"
#include "models/functional_config.h"
#include "models/layer_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

absl::StatusOr<ParsedConfig> ParseConfig(std::string_view text,
                                         const std::string& file) {
  GG_ASSIGN_OR_RETURN(const Json root, ParseJsonObject(text, file));
  const ConfigObject top(root, file);
  GG_ASSIGN_OR_RETURN(const std::string class_name, top.String("class_name"));
  if (class_name != "Sequential" && class_name != "Functional") {
    return top.Error(
        absl::StrCat("class_name is '", class_name,
                     "'; only Sequential and Functional models load"));
  }
  GG_ASSIGN_OR_RETURN(const ConfigObject config,
                      top.Child("config", file + " config"));
  ParsedConfig out;
  out.functional = class_name == "Functional";
  GG_ASSIGN_OR_RETURN(out.name, config.String("name", ""));
  const Json* layers = config.Find("layers");
  if (layers == nullptr) return config.Missing("layers");
  if (!layers->is_array()) {
    return config.WrongType("layers", "a list of layers", *layers);
  }
  for (size_t i = 0; i < layers->size(); ++i) {
    const Json& entry = (*layers)[i];
    const std::string where = absl::StrCat(file, ": layers[", i, "]");
    if (!entry.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " must be an object, got ", Shown(entry)));
    }
    const ConfigObject layer(entry, where);
    GG_ASSIGN_OR_RETURN(const std::string kind_name,
                        layer.String("class_name"));
    const LayerKind* kind = FindLayerKind(kind_name);
    if (kind == nullptr) {
      return layer.Error(absl::StrCat("unknown layer class '", kind_name,
                                      "' (known: ", KnownKinds(), ")"));
    }
    GG_ASSIGN_OR_RETURN(
        const ConfigObject layer_config,
        layer.Child("config",
                    absl::StrCat(where, " (", kind_name, ") config")));
    GG_ASSIGN_OR_RETURN(Layer made, kind->read_config(layer_config));
    out.layers.push_back(std::move(made));
  }
  if (out.functional) {
    GG_ASSIGN_OR_RETURN(
        FunctionalGraph graph,
        ReadFunctionalGraph(config, *layers, std::move(out.layers), file));
    out.layers = std::move(graph.layers);
    out.inputs = std::move(graph.inputs);
    out.outputs = std::move(graph.outputs);
    out.weights_input_shapes = std::move(graph.weights_input_shapes);
  }
  const Json* compile = top.Find("compile_config");
  if (compile != nullptr && !compile->is_null()) {
    if (!compile->is_object()) {
      return top.WrongType("compile_config", "an object or null", *compile);
    }
    GG_ASSIGN_OR_RETURN(out.compile, ReadCompile(ConfigObject(
                                         *compile, file + " compile_config")));
  }
  return out;
}

Json ConfigJson(const ModelSnapshot& snap, const ScopeRenaming& renaming) {
  if (snap.class_name == "Functional") {
    return FunctionalConfigJson(snap, renaming);
  }
  Json layers = Json::array();
  for (const models_internal::SavedLayer& saved : snap.layers) {
    // Every kind a model can hold is in the table (LoadModel reads none
    // other); Save checks before calling.
    const LayerKind* kind = FindLayerKind(saved.layer.kind());
    Json entry = KerasObject(
        "keras.layers", kind->class_name.c_str(),
        kind->write_config(*saved.state,
                           RenameScopes(saved.layer.name(), renaming)));
    layers.push_back(std::move(entry));
  }
  const TensorShape input_shape =
      snap.layers.empty() ? TensorShape() : snap.layers[0].state->input_shape;
  Json config = {{"name", RenameScopes(snap.name, renaming)},
                 {"trainable", true},
                 {"dtype", "float32"},
                 {"layers", std::move(layers)},
                 {"build_input_shape", BatchShape(input_shape)}};
  Json root = KerasObject("keras", "Sequential", std::move(config));
  root["build_config"] = {{"input_shape", BatchShape(input_shape)}};
  root["compile_config"] =
      snap.compiled ? CompileJson(snap.compile) : Json(nullptr);
  return root;
}

}  // namespace models_internal
}  // namespace graphgc
