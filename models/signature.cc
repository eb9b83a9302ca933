#include "models/signature.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/keras_json.h"
#include "serialize/frozen_graph.h"
#include "serialize/graph_def.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

Json SignatureTensorJson(const std::string& name, const TensorShape& shape) {
  Json dims = Json::array();
  for (int64_t d : shape.dim_sizes()) {
    dims.push_back(d < 0 ? Json(nullptr) : Json(d));
  }
  return {{"name", name}, {"dtype", "float32"}, {"shape", std::move(dims)}};
}

absl::StatusOr<SignatureTensor> ReadSignatureTensor(const Object& parent,
                                                    const char* key) {
  GG_ASSIGN_OR_RETURN(
      const Object t,
      parent.Child(key, absl::StrCat(parent.where(), ".", key)));
  GG_ASSIGN_OR_RETURN(std::string name, t.String("name"));
  GG_ASSIGN_OR_RETURN(const std::string dtype, t.String("dtype"));
  if (dtype != "float32") {
    return t.Error(absl::StrCat("dtype '", dtype, "' (only float32)"));
  }
  const Json* shape = t.Find("shape");
  if (shape == nullptr) return t.Missing("shape");
  if (!shape->is_array()) {
    return t.WrongType("shape", "a list of integers or nulls", *shape);
  }
  std::vector<int64_t> dims;
  for (const Json& d : *shape) {
    if (d.is_null()) {
      dims.push_back(-1);
    } else if (d.is_number_integer() && !d.is_number_unsigned() &&
               d.get<int64_t>() >= 0) {
      dims.push_back(d.get<int64_t>());
    } else if (d.is_number_unsigned() &&
               d.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
      dims.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    } else {
      return t.Error(absl::StrCat(
          "field 'shape' must be a list of integers or nulls; it holds ",
          Shown(d)));
    }
  }
  if (absl::Status valid = TensorShape::Validate(dims, /*allow_unknown=*/true);
      !valid.ok()) {
    return t.Error(absl::StrCat("field 'shape': ", valid.message()));
  }
  return SignatureTensor{
      .name = std::move(name), .dtype = DT_FLOAT, .shape = TensorShape(dims)};
}

}  // namespace

absl::StatusOr<FrozenModel> Freeze(const ModelSnapshot& snap) {
  GG_ASSIGN_OR_RETURN(proto::GraphDef def, ExportGraphDef({snap.output}));
  int input_index = -1, output_index = -1;
  for (int i = 0; i < def.node_size(); ++i) {
    if (def.node(i).name() == snap.input.node_name()) input_index = i;
    if (def.node(i).name() == snap.output.node_name()) output_index = i;
  }
  if (input_index < 0 || output_index < 0) {
    return absl::InternalError(
        "Sequential::Save: the exported graph lacks the model's input or "
        "output");
  }
  GG_ASSIGN_OR_RETURN(proto::GraphDef frozen,
                      FreezeGraphDef(def, snap.variables));
  // Names as in a fresh graph ("dense", not "dense_14"); order is kept.
  LocalizeScopeNames(frozen);
  std::vector<int64_t> output_dims = {-1};
  const auto& shapes = def.node(output_index).attr();
  auto it = shapes.find("_output_shapes");
  if (it != shapes.end() &&
      it->second.list().shape_size() > snap.output.index()) {
    output_dims.clear();
    for (const auto& d : it->second.list().shape(snap.output.index()).dim()) {
      output_dims.push_back(d.size());
    }
  }
  std::vector<int64_t> input_dims = {-1};
  for (int64_t d : snap.layers[0].state->input_shape.dim_sizes()) {
    input_dims.push_back(d);
  }
  const Json signature = {
      {"inputs",
       {{"x", SignatureTensorJson(
                  absl::StrCat(frozen.node(input_index).name(), ":0"),
                  TensorShape(input_dims))}}},
      {"outputs",
       {{"predictions",
         SignatureTensorJson(absl::StrCat(frozen.node(output_index).name(), ":",
                                          snap.output.index()),
                             TensorShape(output_dims))}}}};
  return FrozenModel{
      .graph_bytes = DeterministicBytes(frozen),
      .signature =
          signature.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"};
}

absl::StatusOr<Signature> ParseSignatureUnguarded(std::string_view text,
                                                  const std::string& file) {
  GG_ASSIGN_OR_RETURN(const Json root, ParseJsonObject(text, file));
  const Object top(root, file);
  GG_ASSIGN_OR_RETURN(const Object inputs,
                      top.Child("inputs", file + ": inputs"));
  GG_ASSIGN_OR_RETURN(const Object outputs,
                      top.Child("outputs", file + ": outputs"));
  Signature out;
  GG_ASSIGN_OR_RETURN(out.input, ReadSignatureTensor(inputs, "x"));
  GG_ASSIGN_OR_RETURN(out.output, ReadSignatureTensor(outputs, "predictions"));
  return out;
}

}  // namespace models_internal
}  // namespace graphgc
