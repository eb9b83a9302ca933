// Multiply: Multiplies its inputs elementwise (Keras's Multiply): a list of
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

absl::StatusOr<Layer> ReadMultiplyConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(std::string name, MergeConfigName(config));
  return layers::Multiply(std::move(name));
}

absl::StatusOr<LayerOutputs> ApplyMultiply(const LayerState&,
                                           const BuiltLayer& built,
                                           const std::vector<Output>& xs,
                                           bool) {
  GG_ASSIGN_OR_RETURN(Output y, FoldInputs(xs, built.name(), "mul", ops::Mul));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& MultiplyKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Multiply",
      .default_name = "multiply",
      .order = 22,
      .weights_group = "multiply",
      .fields = {{"name", "name", "null"}},
      .write_config = MergeConfig,
      .read_config = ReadMultiplyConfig,
      .min_inputs = 1,
      .max_inputs = 0,
      .list_output_shape = ElementwiseMergeShape,
      .list_apply = ApplyMultiply,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(MultiplyKind);
}  // namespace models_internal

namespace layers {

Layer Multiply(std::string name) {
  return MakeLayer(models_internal::NewLayerState(
      models_internal::MultiplyKind(), std::move(name), nullptr));
}

}  // namespace layers
}  // namespace graphgc
