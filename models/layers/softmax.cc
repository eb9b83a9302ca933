// Softmax (Keras 3's keras.layers.Softmax): exp(x) / sum(exp(x)) over the
// last axis (TensorFlow's Softmax op); no variables. Another axis, or
// several, is refused when the layer meets its input shape. As with
// activation="softmax", a crossentropy loss reads the logits before it.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/layer_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct SoftmaxConfig : LayerConfig {
  std::vector<int64_t> axis = {-1};
  bool axis_is_list = false;  // written back as given
};

const SoftmaxConfig& Config(const LayerState& layer) {
  return ConfigOf<SoftmaxConfig>(layer);
}

const LayerKind& SoftmaxKind();

Json WriteSoftmaxConfig(const LayerState& layer, const std::string& name) {
  const SoftmaxConfig& s = Config(layer);
  Json c = CommonConfig(name);
  c["axis"] = s.axis_is_list ? Json(s.axis) : Json(s.axis[0]);
  return c;
}

absl::StatusOr<Layer> ReadSoftmaxConfig(const ConfigObject& config) {
  auto c = std::make_unique<SoftmaxConfig>();
  const Json* axis = config.Find("axis");
  c->axis_is_list = axis != nullptr && axis->is_array();
  GG_ASSIGN_OR_RETURN(c->axis, config.IntList("axis", std::vector<int64_t>{-1},
                                              /*scalar_ok=*/true));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  const std::vector<int64_t> given = c->axis;
  auto state = NewLayerState(SoftmaxKind(), std::move(name), std::move(c));
  if (given.size() != 1) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state), ": axis [", absl::StrJoin(given, ", "),
        "] is not supported: graphgc's Softmax takes one axis, the last "
        "(axis=-1)"));
  }
  return MakeLayer(std::move(state));
}

absl::StatusOr<TensorShape> SoftmaxOutputShape(const LayerState& layer,
                                               const TensorShape& in) {
  const int64_t axis = Config(layer).axis[0];
  const int64_t rank = in.dims() + 1;
  if (in.dims() < 1 || (axis != -1 && axis != rank - 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": axis ", axis, " of input shape ", KerasShape(in),
        " is not supported: graphgc's Softmax is over the last axis only "
        "(axis=-1)"));
  }
  return in;
}

absl::StatusOr<LayerOutputs> ApplySoftmax(const LayerState&,
                                          const BuiltLayer& built,
                                          const Output& x, bool) {
  return ActivationOutputs("softmax", x, built.name());
}

const LayerKind& SoftmaxKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Softmax",
      .default_name = "softmax",
      .weights_group = "softmax",
      .fields = {{"axis", "axis", "-1"}, {"name", "name", "null"}},
      .write_config = WriteSoftmaxConfig,
      .read_config = ReadSoftmaxConfig,
      .output_shape = SoftmaxOutputShape,
      .apply = ApplySoftmax,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(SoftmaxKind);
}  // namespace models_internal
}  // namespace graphgc
