#include "models/model_config.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "models/compile_config.h"
#include "models/layer_configs.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

absl::StatusOr<ParsedConfig> ParseConfig(std::string_view text,
                                         const std::string& file) {
  GG_ASSIGN_OR_RETURN(const Json root, ParseJsonObject(text, file));
  const Object top(root, file);
  GG_ASSIGN_OR_RETURN(const std::string class_name, top.String("class_name"));
  if (class_name != "Sequential") {
    return top.Error(absl::StrCat("class_name is '", class_name,
                                  "'; only Sequential models load"));
  }
  GG_ASSIGN_OR_RETURN(const Object config,
                      top.Child("config", file + " config"));
  ParsedConfig out;
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
    const Object layer(entry, where);
    GG_ASSIGN_OR_RETURN(const std::string kind_name,
                        layer.String("class_name"));
    const LayerKind* kind = FindKind(kind_name);
    if (kind == nullptr) {
      return layer.Error(absl::StrCat("unknown layer class '", kind_name,
                                      "' (known: ", KnownKinds(), ")"));
    }
    GG_ASSIGN_OR_RETURN(
        const Object layer_config,
        layer.Child("config",
                    absl::StrCat(where, " (", kind_name, ") config")));
    GG_ASSIGN_OR_RETURN(Layer made, kind->read_config(layer_config));
    out.layers.push_back(std::move(made));
  }
  const Json* compile = top.Find("compile_config");
  if (compile != nullptr && !compile->is_null()) {
    if (!compile->is_object()) {
      return top.WrongType("compile_config", "an object or null", *compile);
    }
    GG_ASSIGN_OR_RETURN(
        out.compile, ReadCompile(Object(*compile, file + " compile_config")));
  }
  return out;
}

Json ConfigJson(const ModelSnapshot& snap, const ScopeRenaming& renaming) {
  Json layers = Json::array();
  for (const models_internal::SavedLayer& saved : snap.layers) {
    // Every kind a model can hold is in the table (LoadModel reads none
    // other); Save checks before calling.
    const LayerKind* kind = FindKind(saved.layer.kind());
    Json entry = KerasObject(
        "keras.layers", kind->class_name,
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
