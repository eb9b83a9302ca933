// InputLayer: the model's input, a placeholder [batch, shape...]; no
// variables and no forward nodes.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

Json WriteInputConfig(const LayerState& layer, const std::string& name) {
  const Json shape = BatchShape(layer.input_shape);
  // Keras 3 reads "batch_shape"; "batch_input_shape" is Keras 2's spelling,
  // which Keras 3 also takes.
  return {{"batch_shape", shape},
          {"batch_input_shape", shape},
          {"dtype", "float32"},
          {"sparse", false},
          {"name", name}};
}

absl::StatusOr<Layer> ReadInputConfig(const ConfigObject& config) {
  const char* key = "batch_shape";
  const Json* shape = config.Find(key);
  if (shape == nullptr) {
    key = "batch_input_shape";
    shape = config.Find(key);
  }
  if (shape == nullptr) {
    // Keras 3's constructor argument: the shape without the batch.
    if (const Json* sample = config.Find("shape"); sample != nullptr) {
      GG_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                          config.IntList("shape", std::nullopt, false));
      GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
      return layers::Input(TensorShape(dims), std::move(name));
    }
    return config.Missing("batch_shape");
  }
  const char* want = "a list [null, dim, ...] of positive integers or nulls";
  if (!shape->is_array() || shape->empty()) {
    return config.WrongType(key, want, *shape);
  }
  std::vector<int64_t> dims;
  for (size_t i = 1; i < shape->size(); ++i) {
    const Json& d = (*shape)[i];
    if (d.is_null()) {
      dims.push_back(-1);
    } else if (d.is_number_integer() && !d.is_number_unsigned() &&
               d.get<int64_t>() > 0) {
      dims.push_back(d.get<int64_t>());
    } else if (d.is_number_unsigned() &&
               d.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX) &&
               d.get<uint64_t>() > 0) {
      dims.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    } else {
      return config.Error(absl::StrCat("field '", key, "' must be ", want,
                                       "; entry ", i, " is ", Shown(d)));
    }
  }
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return layers::Input(TensorShape(dims), std::move(name));
}

absl::StatusOr<TensorShape> InputOutputShape(const LayerState& layer,
                                             const TensorShape&) {
  return layer.input_shape;
}

int64_t InputUnits(const LayerState& layer) {
  return layer.input_shape.dims() == 1 ? layer.input_shape[0] : -1;
}

const LayerKind& InputKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "InputLayer",
      .default_name = "input",
      .order = 0,
      .is_input = true,
      .label = "Input",
      .fields = {{"shape", "shape", ""}, {"name", "name", "null"}},
      .write_config = WriteInputConfig,
      .read_config = ReadInputConfig,
      .output_shape = InputOutputShape,
      .units = InputUnits,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(InputKind);
}  // namespace models_internal

namespace layers {

Layer Input(TensorShape shape, std::string name) {
  auto state = models_internal::NewLayerState(models_internal::InputKind(),
                                              std::move(name), nullptr);
  state->input_shape = shape;
  bool ok = shape.dims() >= 1;
  for (int i = 0; i < shape.dims(); ++i) ok = ok && shape[i] >= 1;
  if (ok) ok = shape.CheckedNumElements().ok();
  if (!ok) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        models_internal::LayerLabel(*state), ": shape ", shape.DebugString(),
        " is not supported; give known sizes >= 1 without the batch "
        "dimension, e.g. Input({10}) or Input({8, 8, 1})"));
  }
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
