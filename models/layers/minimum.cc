// Minimum: The elementwise minimum of its inputs (Keras's Minimum): a list of
// values of one shape (dimensions of 1 broadcast); no variables.
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

absl::StatusOr<Layer> ReadMinimumConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(std::string name, MergeConfigName(config));
  return layers::Minimum(std::move(name));
}

absl::StatusOr<LayerOutputs> ApplyMinimum(const LayerState&,
                                          const BuiltLayer& built,
                                          const std::vector<Output>& xs, bool) {
  GG_ASSIGN_OR_RETURN(Output y,
                      FoldInputs(xs, built.name(), "minimum", ops::Minimum));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& MinimumKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Minimum",
      .default_name = "minimum",
      .order = 25,
      .weights_group = "minimum",
      .fields = {{"name", "name", "null"}},
      .write_config = MergeConfig,
      .read_config = ReadMinimumConfig,
      .min_inputs = 1,
      .max_inputs = 0,
      .list_output_shape = ElementwiseMergeShape,
      .list_apply = ApplyMinimum,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(MinimumKind);
}  // namespace models_internal

namespace layers {

Layer Minimum(std::string name) {
  return MakeLayer(models_internal::NewLayerState(
      models_internal::MinimumKind(), std::move(name), nullptr));
}

}  // namespace layers
}  // namespace graphgc
