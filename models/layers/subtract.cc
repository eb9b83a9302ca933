// Subtract: Subtracts its second input from its first elementwise (Keras's
// Subtract): exactly two values of one shape (dimensions of 1 broadcast); no
// variables.
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

absl::StatusOr<Layer> ReadSubtractConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(std::string name, MergeConfigName(config));
  return layers::Subtract(std::move(name));
}

absl::StatusOr<LayerOutputs> ApplySubtract(const LayerState&,
                                           const BuiltLayer& built,
                                           const std::vector<Output>& xs,
                                           bool) {
  GG_ASSIGN_OR_RETURN(Output y, FoldInputs(xs, built.name(), "sub", ops::Sub));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& SubtractKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Subtract",
      .default_name = "subtract",
      .order = 21,
      .weights_group = "subtract",
      .fields = {{"name", "name", "null"}},
      .write_config = MergeConfig,
      .read_config = ReadSubtractConfig,
      .min_inputs = 2,
      .max_inputs = 2,
      .list_output_shape = ElementwiseMergeShape,
      .list_apply = ApplySubtract,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(SubtractKind);
}  // namespace models_internal

namespace layers {

Layer Subtract(std::string name) {
  return MakeLayer(models_internal::NewLayerState(
      models_internal::SubtractKind(), std::move(name), nullptr));
}

}  // namespace layers
}  // namespace graphgc
