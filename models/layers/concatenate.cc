// Concatenate: joins its inputs along one axis with ConcatV2 (Keras's
// Concatenate). The axis counts the batch: 0 (or -rank - 1) joins batches,
// -1 is the last. The inputs agree on every other dimension (an unknown one
// agrees with any). Each output element is a copy of one input element, and
// the gradient is the upstream gradient sliced back per input.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "ops/concat_ops.h"
#include "runtime/tensor.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct ConcatenateConfig : LayerConfig {
  int64_t axis = -1;
};

const ConcatenateConfig& Config(const LayerState& layer) {
  return ConfigOf<ConcatenateConfig>(layer);
}

Json WriteConcatenateConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["axis"] = Config(layer).axis;
  return c;
}

absl::StatusOr<Layer> ReadConcatenateConfig(const ConfigObject& config) {
  int64_t axis = -1;
  if (config.Find("axis") != nullptr) {
    GG_ASSIGN_OR_RETURN(axis, config.Int("axis"));
  }
  GG_ASSIGN_OR_RETURN(std::string name, MergeConfigName(config));
  return layers::Concatenate(axis, std::move(name));
}

// The axis of the batched inputs (rank counts the batch) that Keras's
// `axis` names: [-rank, rank).
absl::StatusOr<int> BatchedAxis(const LayerState& layer,
                                const std::vector<TensorShape>& in) {
  const int rank = in[0].dims() + 1;
  const int64_t axis = Config(layer).axis;
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": axis ", axis, " is out of range for ",
        KerasShape(in[0]), " inputs (rank ", rank, ")"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// The output's sample shape: `in` are the inputs' sample shapes (no batch).
absl::StatusOr<TensorShape> ConcatenateShape(
    const LayerState& layer, const std::vector<TensorShape>& in) {
  const std::string mismatch = absl::StrCat(
      LayerLabel(layer),
      ": A `Concatenate` layer requires inputs with matching shapes except "
      "for the concatenation axis. Received: input_shape=",
      KerasShapes(in));
  const int rank = in[0].dims();
  GG_ASSIGN_OR_RETURN(const int batched_axis, BatchedAxis(layer, in));
  // -1: the batch axis, along which every sample dimension must agree.
  const int sample_axis = batched_axis - 1;
  std::vector<int64_t> dims(in[0].dim_sizes().begin(), in[0].dim_sizes().end());
  for (size_t i = 1; i < in.size(); ++i) {
    const TensorShape& s = in[i];
    if (s.dims() != rank) return absl::InvalidArgumentError(mismatch);
    for (int d = 0; d < rank; ++d) {
      if (d == sample_axis) {
        if (dims[d] < 0 || s[d] < 0) {
          dims[d] = -1;
        } else if (__builtin_add_overflow(dims[d], s[d], &dims[d])) {
          return absl::InvalidArgumentError(
              absl::StrCat(LayerLabel(layer), ": the joined axis of ",
                           KerasShapes(in), " has too many elements"));
        }
      } else if (dims[d] < 0) {
        dims[d] = s[d];
      } else if (s[d] >= 0 && s[d] != dims[d]) {
        return absl::InvalidArgumentError(mismatch);
      }
    }
  }
  return TensorShape(dims);
}

absl::StatusOr<LayerOutputs> ApplyConcatenate(const LayerState& layer,
                                              const BuiltLayer& built,
                                              const std::vector<Output>& xs,
                                              bool) {
  std::vector<TensorShape> in;
  for (const Output& x : xs) {
    const TensorShape& s = x.shape();
    std::vector<int64_t> sample(s.dim_sizes().begin() + 1, s.dim_sizes().end());
    in.emplace_back(sample);
  }
  GG_RETURN_IF_ERROR(ConcatenateShape(layer, in).status());
  GG_ASSIGN_OR_RETURN(const int axis, BatchedAxis(layer, in));
  // Keras's Concatenate of one input is that input; ConcatV2 takes two or
  // more.
  GG_ASSIGN_OR_RETURN(
      Output y,
      xs.size() == 1
          ? ops::Identity(xs[0], {.name = built.name() + "/Identity"})
          : ops::ConcatV2(xs, axis, {.name = built.name() + "/concat"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& ConcatenateKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Concatenate",
      .default_name = "concatenate",
      .order = 26,
      .weights_group = "concatenate",
      .fields = {{"axis", "int32", "-1"}, {"name", "name", "null"}},
      .write_config = WriteConcatenateConfig,
      .read_config = ReadConcatenateConfig,
      .min_inputs = 1,
      .max_inputs = 0,
      .list_output_shape = ConcatenateShape,
      .list_apply = ApplyConcatenate,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(ConcatenateKind);
}  // namespace models_internal

namespace layers {

Layer Concatenate(int64_t axis, std::string name) {
  auto config = std::make_unique<models_internal::ConcatenateConfig>();
  config->axis = axis;
  return MakeLayer(models_internal::NewLayerState(
      models_internal::ConcatenateKind(), std::move(name), std::move(config)));
}

}  // namespace layers
}  // namespace graphgc
