// Add: Adds its inputs elementwise (Keras's Add): a list of values of one shape
// (dimensions of 1 broadcast); no variables.
#include <string>
#include <utility>
#include <vector>

#include "models/layer_registry.h"
#include "models/layers.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Layer> ReadAddConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(std::string name, MergeConfigName(config));
  return layers::Add(std::move(name));
}

absl::StatusOr<LayerOutputs> ApplyAdd(const LayerState&,
                                      const BuiltLayer& built,
                                      const std::vector<Output>& xs, bool) {
  GG_ASSIGN_OR_RETURN(Output y, FoldInputs(xs, built.name(), "add", ops::Add));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& AddKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Add",
      .default_name = "add",
      .order = 20,
      .weights_group = "add",
      .fields = {{"name", "name", "null"}},
      .write_config = MergeConfig,
      .read_config = ReadAddConfig,
      .min_inputs = 1,
      .max_inputs = 0,
      .list_output_shape = ElementwiseMergeShape,
      .list_apply = ApplyAdd,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(AddKind);
}  // namespace models_internal

namespace layers {

Layer Add(std::string name) {
  return MakeLayer(models_internal::NewLayerState(models_internal::AddKind(),
                                                  std::move(name), nullptr));
}

}  // namespace layers
}  // namespace graphgc
