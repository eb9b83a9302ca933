// Dot (Keras 3's keras.layers.Dot): the dot product of two samples along
// `axes`, optionally of their L2-normalised values (normalize: the cosine
// proximity); no variables. graphgc takes rank-2 inputs (batch, d), the
// product along axis 1 giving (batch, 1) as Keras's batch_dot does; other
// ranks are refused.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/layer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

// Keras's epsilon: normalize divides by max(norm, 1e-7).
constexpr double kNormEpsilon = 1e-7;

struct DotConfig : LayerConfig {
  std::vector<int64_t> axes;  // one value (both inputs) or two
  bool axes_is_list = false;  // written back as given
  bool normalize = false;
};

const DotConfig& Config(const LayerState& layer) {
  return ConfigOf<DotConfig>(layer);
}

const LayerKind& DotKind();

Json WriteDotConfig(const LayerState& layer, const std::string& name) {
  const DotConfig& d = Config(layer);
  Json c = CommonConfig(name);
  c["axes"] = d.axes_is_list ? Json(d.axes) : Json(d.axes[0]);
  c["normalize"] = d.normalize;
  return c;
}

absl::StatusOr<Layer> ReadDotConfig(const ConfigObject& config) {
  auto c = std::make_unique<DotConfig>();
  const Json* axes = config.Find("axes");
  if (axes == nullptr || axes->is_null()) return config.Missing("axes");
  c->axes_is_list = axes->is_array();
  GG_ASSIGN_OR_RETURN(c->axes,
                      config.IntList("axes", std::nullopt, /*scalar_ok=*/true));
  GG_ASSIGN_OR_RETURN(c->normalize, config.Bool("normalize", false));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  const std::vector<int64_t> given = c->axes;
  const bool is_list = c->axes_is_list;
  auto state = NewLayerState(DotKind(), std::move(name), std::move(c));
  if (is_list && given.size() != 2) {
    state->error = absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(*state),
        ": Invalid format for argument `axes`: it should contain two "
        "elements. Received: axes=[",
        absl::StrJoin(given, ", "), "]"));
  }
  return MakeLayer(std::move(state));
}

// Keras's axes of input i (negative ones taken modulo the batched rank).
int64_t AxisOf(const DotConfig& c, size_t i, int64_t rank) {
  const int64_t a = c.axes.size() == 2 ? c.axes[i] : c.axes[0];
  return a < 0 ? ((a % rank) + rank) % rank : a;
}

absl::StatusOr<TensorShape> DotOutputShape(const LayerState& layer,
                                           const std::vector<TensorShape>& in) {
  const DotConfig& c = Config(layer);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(LayerLabel(layer),
                       ": takes two rank-2 inputs (batch, d) in graphgc, "
                       "gets ",
                       KerasShapes(in)));
    }
    if (AxisOf(c, i, 2) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(LayerLabel(layer),
                       ": axes must name axis 1 (or -1) of rank-2 "
                       "inputs (axis 0 is the batch), got axes=[",
                       absl::StrJoin(c.axes, ", "), "] for ", KerasShapes(in)));
    }
  }
  if (in[0][0] != in[1][0]) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": Incompatible input shapes: axis values ",
        in[0][0], " (at axis 1) != ", in[1][0],
        " (at axis 1). Full input shapes: ", KerasShape(in[0]), ", ",
        KerasShape(in[1])));
  }
  return TensorShape({1});
}

// x / max(||x||, epsilon) along the last axis (the square root taken of
// max(sum of squares, epsilon^2), whose gradient stays finite at 0).
absl::StatusOr<Output> L2Normalize(const Output& x, const std::string& scope) {
  GG_ASSIGN_OR_RETURN(Output sq, ops::Square(x, {.name = scope + "/Square"}));
  GG_ASSIGN_OR_RETURN(
      Output ss,
      ops::Sum(sq, {.name = scope + "/Sum", .axes = {-1}, .keep_dims = true}));
  GG_ASSIGN_OR_RETURN(Output floor,
                      ops::ScalarLike(x, kNormEpsilon * kNormEpsilon,
                                      {.name = scope + "/epsilon"}));
  GG_ASSIGN_OR_RETURN(ss,
                      ops::Maximum(ss, floor, {.name = scope + "/Maximum"}));
  GG_ASSIGN_OR_RETURN(Output norm, ops::Sqrt(ss, {.name = scope + "/Sqrt"}));
  return ops::RealDiv(x, norm, {.name = scope + "/truediv"});
}

absl::StatusOr<LayerOutputs> ApplyDot(const LayerState& layer,
                                      const BuiltLayer& built,
                                      const std::vector<Output>& xs, bool) {
  const std::string& scope = built.name();
  Output a = xs[0], b = xs[1];
  if (Config(layer).normalize) {
    GG_ASSIGN_OR_RETURN(a, L2Normalize(a, scope + "/normalize"));
    GG_ASSIGN_OR_RETURN(b, L2Normalize(b, scope + "/normalize_1"));
  }
  GG_ASSIGN_OR_RETURN(Output prod, ops::Mul(a, b, {.name = scope + "/mul"}));
  GG_ASSIGN_OR_RETURN(Output y, ops::Sum(prod, {.name = scope + "/Sum",
                                                .axes = {-1},
                                                .keep_dims = true}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& DotKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Dot",
      .default_name = "dot",
      .weights_group = "dot",
      .fields = {{"axes", "axis", ""},
                 {"normalize", "bool", "false"},
                 {"name", "name", "null"}},
      .write_config = WriteDotConfig,
      .read_config = ReadDotConfig,
      .min_inputs = 2,
      .max_inputs = 2,
      .list_output_shape = DotOutputShape,
      .list_apply = ApplyDot,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(DotKind);
}  // namespace models_internal
}  // namespace graphgc
