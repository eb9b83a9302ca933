// The layers without weights that only move or mask values: Flatten and
// Reshape (TensorFlow's Reshape op) and Dropout (RandomUniform,
// GreaterEqual, Cast and Mul in training steps; nothing in inference).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_state.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

absl::StatusOr<TensorShape> ReshapeOutputShape(const LayerState& layer,
                                               const TensorShape& in) {
  // `in` is a valid per-sample shape (from Input and the layers before).
  GG_ASSIGN_OR_RETURN(int64_t elements, in.CheckedNumElements());
  if (layer.kind == LayerState::Kind::kFlatten) {
    return TensorShape({elements});
  }
  const TensorShape& target = layer.target_shape;
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

absl::StatusOr<LayerOutputs> ApplyReshape(const BuiltLayer& built,
                                          const Output& x,
                                          const TensorShape& out) {
  std::vector<int64_t> dims = {-1};
  for (int i = 0; i < out.dims(); ++i) dims.push_back(out[i]);
  GG_ASSIGN_OR_RETURN(
      Output y, ops::Reshape(x, dims, {.name = built.name() + "/Reshape"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

// Training: x * (1 / (1 - rate)) * mask, mask = Cast(RandomUniform(Shape(x))
// >= rate): each element kept with probability 1 - rate, so the expected
// output is x. The mask is a Cast of a bool, which passes no gradient.
// Inference: x itself, no node.
absl::StatusOr<LayerOutputs> ApplyDropout(const LayerState& layer,
                                          const BuiltLayer& built,
                                          const Output& x, bool training) {
  if (!training || layer.rate == 0.f) {
    return LayerOutputs{.pre_activation = x, .output = x};
  }
  const std::string s = built.name();
  GG_ASSIGN_OR_RETURN(Output shape, ops::Shape(x, {.name = s + "/Shape"}));
  // Both seeds non-zero: a reproducible stream (RandomUniform's rule).
  GG_ASSIGN_OR_RETURN(
      Output uniform,
      ops::RandomUniform(
          shape, {.name = s + "/random_uniform/RandomUniform",
                  .seed = static_cast<int64_t>(layer.seed & INT64_MAX) | 1,
                  .seed2 = static_cast<int64_t>(layer.seed >> 32) | 1}));
  GG_ASSIGN_OR_RETURN(Output rate,
                      ops::ScalarLike(x, layer.rate, {.name = s + "/rate"}));
  GG_ASSIGN_OR_RETURN(
      Output keep,
      ops::GreaterEqual(uniform, rate, {.name = s + "/GreaterEqual"}));
  GG_ASSIGN_OR_RETURN(Output mask,
                      ops::Cast(keep, DT_FLOAT, {.name = s + "/Cast"}));
  GG_ASSIGN_OR_RETURN(
      Output scale,
      ops::ScalarLike(x, 1.0 / (1.0 - static_cast<double>(layer.rate)),
                      {.name = s + "/Const"}));
  GG_ASSIGN_OR_RETURN(Output scaled, ops::Mul(x, scale, {.name = s + "/Mul"}));
  GG_ASSIGN_OR_RETURN(Output y, ops::Mul(scaled, mask, {.name = s + "/Mul_1"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

}  // namespace models_internal
}  // namespace graphgc
