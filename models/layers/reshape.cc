// Reshape: [batch, ...] to [batch, target_shape...] (a Reshape op); one
// target dimension may be -1 (inferred).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "models/training.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct ReshapeConfig : LayerConfig {
  TensorShape target_shape;
};

const ReshapeConfig& Config(const LayerState& layer) {
  return ConfigOf<ReshapeConfig>(layer);
}

Json WriteReshapeConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  const absl::Span<const int64_t> target =
      Config(layer).target_shape.dim_sizes();
  c["target_shape"] = std::vector<int64_t>(target.begin(), target.end());
  return c;
}

absl::StatusOr<Layer> ReadReshapeConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> target,
                      config.IntList("target_shape", std::nullopt, false));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return layers::Reshape(TensorShape(target), std::move(name));
}

absl::StatusOr<TensorShape> ReshapeOutputShape(const LayerState& layer,
                                               const TensorShape& in) {
  // `in` is a valid per-sample shape (from Input and the layers before).
  GG_ASSIGN_OR_RETURN(int64_t elements, in.CheckedNumElements());
  const TensorShape& target = Config(layer).target_shape;
  int64_t known = 1;
  int unknown = -1;
  for (int i = 0; i < target.dims(); ++i) {
    if (target[i] == -1) {
      unknown = i;
    } else if (!MultiplySizes(known, target[i], &known)) {
      known = -1;
      break;
    }
  }
  const bool fits =
      known > 0 && (unknown >= 0 ? elements % known == 0 : elements == known);
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": cannot reshape ", KerasShape(in), " (", elements,
        " values per sample) to ", KerasShape(target)));
  }
  std::vector<int64_t> dims(target.dim_sizes().begin(),
                            target.dim_sizes().end());
  if (unknown >= 0) dims[unknown] = elements / known;
  return TensorShape(dims);
}

absl::StatusOr<LayerOutputs> ApplyReshapeLayer(const LayerState& layer,
                                               const BuiltLayer& built,
                                               const Output& x, bool) {
  GG_ASSIGN_OR_RETURN(TensorShape out, ReshapeOutputShape(layer, built.shape));
  return ApplyReshape(built, x, out);
}

const LayerKind& ReshapeKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Reshape",
      .default_name = "reshape",
      .order = 7,
      .weights_group = "reshape",
      .fields = {{"target_shape", "shape", ""}, {"name", "name", "null"}},
      .write_config = WriteReshapeConfig,
      .read_config = ReadReshapeConfig,
      .output_shape = ReshapeOutputShape,
      .apply = ApplyReshapeLayer,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(ReshapeKind);
}  // namespace models_internal

namespace layers {

Layer Reshape(TensorShape target_shape, std::string name) {
  auto config = std::make_unique<models_internal::ReshapeConfig>();
  config->target_shape = target_shape;
  auto state = models_internal::NewLayerState(
      models_internal::ReshapeKind(), std::move(name), std::move(config));
  int unknown = 0;
  bool ok = target_shape.dims() >= 1;
  for (int i = 0; i < target_shape.dims(); ++i) {
    if (target_shape[i] == -1) {
      ++unknown;
    } else if (target_shape[i] < 1) {
      ok = false;
    }
  }
  if (!ok || unknown > 1) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        models_internal::LayerLabel(*state), ": target_shape ",
        target_shape.DebugString(),
        " must have sizes >= 1 and at most one -1 (without the batch "
        "dimension)"));
  }
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
