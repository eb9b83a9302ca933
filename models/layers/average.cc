// Average: the elementwise mean of its inputs (Keras's Average): a list of
// values of one shape (dimensions of 1 broadcast); no variables.
#include <string>
#include <utility>
#include <vector>

#include "models/layer_registry.h"
#include "models/layers.h"
#include "ops/ops.h"
#include "runtime/tensor.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Layer> ReadAverageConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(std::string name, MergeConfigName(config));
  return layers::Average(std::move(name));
}

absl::StatusOr<LayerOutputs> ApplyAverage(const LayerState&,
                                          const BuiltLayer& built,
                                          const std::vector<Output>& xs, bool) {
  GG_ASSIGN_OR_RETURN(Output sum,
                      FoldInputs(xs, built.name(), "add", ops::Add));
  GG_ASSIGN_OR_RETURN(
      Output scale,
      ops::Const(*sum.graph(),
                 Tensor::Scalar<float>(1.f / static_cast<float>(xs.size())),
                 {.name = built.name() + "/scale"}));
  GG_ASSIGN_OR_RETURN(Output y,
                      ops::Mul(sum, scale, {.name = built.name() + "/mul"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& AverageKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Average",
      .default_name = "average",
      .order = 23,
      .weights_group = "average",
      .fields = {{"name", "name", "null"}},
      .write_config = MergeConfig,
      .read_config = ReadAverageConfig,
      .min_inputs = 1,
      .max_inputs = 0,
      .list_output_shape = ElementwiseMergeShape,
      .list_apply = ApplyAverage,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(AverageKind);
}  // namespace models_internal

namespace layers {

Layer Average(std::string name) {
  return MakeLayer(models_internal::NewLayerState(
      models_internal::AverageKind(), std::move(name), nullptr));
}

}  // namespace layers
}  // namespace graphgc
