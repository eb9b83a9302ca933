// Maximum: The elementwise maximum of its inputs (Keras's Maximum): a list of
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

absl::StatusOr<Layer> ReadMaximumConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(std::string name, MergeConfigName(config));
  return layers::Maximum(std::move(name));
}

absl::StatusOr<LayerOutputs> ApplyMaximum(const LayerState&,
                                          const BuiltLayer& built,
                                          const std::vector<Output>& xs, bool) {
  GG_ASSIGN_OR_RETURN(Output y,
                      FoldInputs(xs, built.name(), "maximum", ops::Maximum));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& MaximumKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Maximum",
      .default_name = "maximum",
      .order = 24,
      .weights_group = "maximum",
      .fields = {{"name", "name", "null"}},
      .write_config = MergeConfig,
      .read_config = ReadMaximumConfig,
      .min_inputs = 1,
      .max_inputs = 0,
      .list_output_shape = ElementwiseMergeShape,
      .list_apply = ApplyMaximum,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(MaximumKind);
}  // namespace models_internal

namespace layers {

Layer Maximum(std::string name) {
  return MakeLayer(models_internal::NewLayerState(
      models_internal::MaximumKind(), std::move(name), nullptr));
}

}  // namespace layers
}  // namespace graphgc
