// Flatten: [batch, d1, d2, ...] to [batch, d1 * d2 * ...] (a Reshape op).
#include <string>

#include "models/layer_registry.h"
#include "models/layers.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

Json WriteFlattenConfig(const LayerState&, const std::string& name) {
  Json c = CommonConfig(name);
  c["data_format"] = "channels_last";
  return c;
}

absl::StatusOr<Layer> ReadFlattenConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(config.Only("data_format", "channels_last"));
  return layers::Flatten(std::move(name));
}

absl::StatusOr<TensorShape> FlattenOutputShape(const LayerState&,
                                               const TensorShape& in) {
  // `in` is a valid per-sample shape (from Input and the layers before).
  GG_ASSIGN_OR_RETURN(int64_t elements, in.CheckedNumElements());
  return TensorShape({elements});
}

absl::StatusOr<LayerOutputs> ApplyFlatten(const LayerState& layer,
                                          const BuiltLayer& built,
                                          const Output& x, bool) {
  GG_ASSIGN_OR_RETURN(TensorShape out, FlattenOutputShape(layer, built.shape));
  return ApplyReshape(built, x, out);
}

const LayerKind& FlattenKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Flatten",
      .default_name = "flatten",
      .order = 4,
      .weights_group = "flatten",
      .fields = {{"name", "name", "null"}},
      .write_config = WriteFlattenConfig,
      .read_config = ReadFlattenConfig,
      .output_shape = FlattenOutputShape,
      .apply = ApplyFlatten,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(FlattenKind);
}  // namespace models_internal

namespace layers {

Layer Flatten(std::string name) {
  return MakeLayer(models_internal::NewLayerState(
      models_internal::FlattenKind(), std::move(name), nullptr));
}

}  // namespace layers
}  // namespace graphgc
