// Concatenate: joins its inputs along one axis (Keras's Concatenate; the
// axis counts the batch, so -1 is the last). The inputs agree on every
// other dimension. The join is composed from differentiable ops: each input,
// as rows of its last dimension, is multiplied by a constant 0/1 matrix
// placing its columns in the output's (x_i @ E_i summed), so gradients flow
// through MatMul's; a NaN or infinity in one input therefore reaches the
// whole row. Only the last axis is implemented.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "ops/ops.h"
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

absl::StatusOr<TensorShape> ConcatenateShape(
    const LayerState& layer, const std::vector<TensorShape>& in) {
  const std::string mismatch = absl::StrCat(
      LayerLabel(layer),
      ": A `Concatenate` layer requires inputs with matching shapes except "
      "for the concatenation axis. Received: input_shape=",
      KerasShapes(in));
  const int rank = in[0].dims();
  // Keras's axis counts the batch dimension: [-rank - 1, rank].
  const int64_t axis = Config(layer).axis;
  if (axis == 0 || axis < -rank - 1 || axis > rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": axis ", axis, " is not a feature axis of ",
        KerasShape(in[0]), " inputs"));
  }
  const int sample_axis =
      static_cast<int>(axis < 0 ? axis + rank + 1 : axis) - 1;
  std::vector<int64_t> dims(in[0].dim_sizes().begin(), in[0].dim_sizes().end());
  dims[sample_axis] = 0;
  for (const TensorShape& s : in) {
    if (s.dims() != rank) return absl::InvalidArgumentError(mismatch);
    for (int d = 0; d < rank; ++d) {
      if (d != sample_axis && s[d] != dims[d]) {
        return absl::InvalidArgumentError(mismatch);
      }
    }
    if (__builtin_add_overflow(dims[sample_axis], s[sample_axis],
                               &dims[sample_axis])) {
      return absl::InvalidArgumentError(
          absl::StrCat(LayerLabel(layer), ": the joined axis of ",
                       KerasShapes(in), " has too many elements"));
    }
  }
  if (sample_axis != rank - 1) {
    return absl::UnimplementedError(absl::StrCat(
        LayerLabel(layer), ": axis ", axis, " of ", KerasShape(in[0]),
        " inputs; only the last axis (-1) is implemented"));
  }
  return TensorShape(dims);
}

// The constant [width, total] matrix placing `width` columns at `offset`.
absl::StatusOr<Output> Placement(Graph& g, int64_t width, int64_t offset,
                                 int64_t total, const std::string& name) {
  GG_ASSIGN_OR_RETURN(Tensor e, Filled(TensorShape({width, total}), 0.f, name));
  float* data = e.mutable_data<float>().data();
  // The shape's size was checked by Filled: these indices fit.
  for (int64_t j = 0; j < width; ++j) data[j * total + offset + j] = 1.f;
  return ops::Const(g, std::move(e), {.name = name});
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
  GG_ASSIGN_OR_RETURN(TensorShape out, ConcatenateShape(layer, in));
  const int rank = out.dims();
  const int64_t total = out[rank - 1];
  const std::string& scope = built.name();
  Graph& g = *xs[0].graph();
  std::vector<Output> parts;
  int64_t offset = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t width = in[i][rank - 1];
    const std::string suffix = i == 0 ? "" : absl::StrCat("_", i);
    Output rows = xs[i];
    if (rank > 1) {
      GG_ASSIGN_OR_RETURN(rows,
                          ops::Reshape(xs[i], TensorShape({-1, width}),
                                       {.name = scope + "/rows" + suffix}));
    }
    GG_ASSIGN_OR_RETURN(Output e, Placement(g, width, offset, total,
                                            scope + "/place" + suffix));
    GG_ASSIGN_OR_RETURN(
        Output part,
        ops::MatMul(rows, e, {.name = scope + "/MatMul" + suffix}));
    parts.push_back(part);
    offset += width;
  }
  GG_ASSIGN_OR_RETURN(Output y, FoldInputs(parts, scope, "add", ops::Add));
  if (rank > 1) {
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), out.dim_sizes().begin(), out.dim_sizes().end());
    GG_ASSIGN_OR_RETURN(
        y, ops::Reshape(y, TensorShape(dims), {.name = scope + "/Reshape"}));
  }
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
