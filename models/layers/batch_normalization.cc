// BatchNormalization: FusedBatchNormV3 over each feature (rank-2 input,
// reshaped to [batch, 1, 1, features] around the op) or channel (rank-4
// NHWC); gamma ones, beta and moving_mean zeros, moving_variance ones (the
// moving statistics not trainable).
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct BatchNormalizationConfig : LayerConfig {
  BatchNormalizationOptions options;
};

const BatchNormalizationOptions& Options(const LayerState& layer) {
  return ConfigOf<BatchNormalizationConfig>(layer).options;
}

Json WriteBatchNormalizationConfig(const LayerState& layer,
                                   const std::string& name) {
  Json c = CommonConfig(name);
  c["axis"] = -1;
  c["momentum"] = FloatJson(Options(layer).momentum);
  c["epsilon"] = FloatJson(Options(layer).epsilon);
  c["center"] = true;
  c["scale"] = true;
  c["beta_initializer"] = InitializerJson("Zeros");
  c["gamma_initializer"] = InitializerJson("Ones");
  c["moving_mean_initializer"] = InitializerJson("Zeros");
  c["moving_variance_initializer"] = InitializerJson("Ones");
  for (const char* k : {"beta_regularizer", "gamma_regularizer",
                        "beta_constraint", "gamma_constraint"}) {
    c[k] = nullptr;
  }
  c["synchronized"] = false;
  return c;
}

absl::StatusOr<Layer> ReadBatchNormalizationConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(const float momentum, config.Float("momentum", 0.99f));
  GG_ASSIGN_OR_RETURN(const float epsilon, config.Float("epsilon", 1e-3f));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(config.Only("center", true));
  GG_RETURN_IF_ERROR(config.Only("scale", true));
  if (const Json* a = config.Find("axis");
      a != nullptr && *a != Json(-1) && *a != Json({-1})) {
    GG_RETURN_IF_ERROR(config.Only("axis", -1));
  }
  return layers::BatchNormalization(
      {.momentum = momentum, .epsilon = epsilon, .name = std::move(name)});
}

absl::StatusOr<TensorShape> BatchNormalizationOutputShape(
    const LayerState& layer, const TensorShape& in) {
  if (in.dims() != 1 && in.dims() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer),
        ": takes [batch, features] or NHWC [batch, height, width, channels] "
        "inputs (FusedBatchNormV3 is 4-D only), but gets ",
        KerasShape(in)));
  }
  return in;
}

std::vector<WeightSpec> BatchNormalizationWeights(const LayerState&,
                                                  const TensorShape& in) {
  if (in.dims() == 0) return {};
  const TensorShape shape = {in[in.dims() - 1]};
  return {{.name = "gamma", .shape = shape, .init = Initializer::kOnes},
          {.name = "beta", .shape = shape, .init = Initializer::kZeros},
          {.name = "moving_mean",
           .shape = shape,
           .trainable = false,
           .init = Initializer::kZeros},
          {.name = "moving_variance",
           .shape = shape,
           .trainable = false,
           .init = Initializer::kOnes}};
}

// Training: the batch's statistics, and the moving averages updated by the
// step (Keras: moving = moving * momentum + batch * (1 - momentum), which is
// FusedBatchNormV3's exponential_avg_factor = 1 - momentum). Inference: the
// moving averages. A [batch, features] input is seen as [batch, 1, 1,
// features] by the op.
absl::StatusOr<LayerOutputs> ApplyBatchNormalization(const LayerState& layer,
                                                     const BuiltLayer& built,
                                                     const Output& x,
                                                     bool training) {
  const std::string& scope = built.name();
  const std::vector<Variable>& v = built.variables;
  const bool flat = built.shape.dims() == 1;
  const int64_t channels = built.shape[built.shape.dims() - 1];
  Output in = x;
  if (flat) {
    GG_ASSIGN_OR_RETURN(in, ops::Reshape(x, {-1, 1, 1, channels},
                                         {.name = scope + "/Reshape"}));
  }
  const BatchNormalizationOptions& o = Options(layer);
  GG_ASSIGN_OR_RETURN(
      ops::FusedBatchNormOutputs bn,
      ops::FusedBatchNormV3(
          in, v[0].read, v[1].read, v[2].read, v[3].read,
          {.name = scope + "/FusedBatchNormV3",
           .epsilon = o.epsilon,
           .exponential_avg_factor = training ? 1.f - o.momentum : 1.f,
           .is_training = training}));
  LayerOutputs out;
  out.output = bn.y;
  if (flat) {
    GG_ASSIGN_OR_RETURN(out.output, ops::Reshape(bn.y, {-1, channels},
                                                 {.name = scope + "/Reshape"}));
  }
  out.pre_activation = out.output;
  if (training) {
    GG_ASSIGN_OR_RETURN(Output mean, ops::AssignVariableOp(
                                         v[2].handle, bn.batch_mean,
                                         {.name = scope + "/AssignMovingAvg"}));
    GG_ASSIGN_OR_RETURN(
        Output variance,
        ops::AssignVariableOp(v[3].handle, bn.batch_variance,
                              {.name = scope + "/AssignMovingAvg_1"}));
    out.updates = {mean.handle(), variance.handle()};
  }
  return out;
}

bool AlwaysTrains(const LayerState&) { return true; }

const LayerKind& BatchNormalizationKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "BatchNormalization",
      .default_name = "batch_normalization",
      .order = 6,
      .weights_group = "batch_normalization",
      .fields = {{"momentum", "float", "0.99"},
                 {"epsilon", "float", "0.001"},
                 {"name", "name", "null"}},
      .write_config = WriteBatchNormalizationConfig,
      .read_config = ReadBatchNormalizationConfig,
      .output_shape = BatchNormalizationOutputShape,
      .weights = BatchNormalizationWeights,
      .apply = ApplyBatchNormalization,
      .has_training_path = AlwaysTrains,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(BatchNormalizationKind);
}  // namespace models_internal

namespace layers {

Layer BatchNormalization(BatchNormalizationOptions options) {
  auto config = std::make_unique<models_internal::BatchNormalizationConfig>();
  config->options = std::move(options);
  const BatchNormalizationOptions& o = config->options;
  auto state = models_internal::NewLayerState(
      models_internal::BatchNormalizationKind(), o.name, std::move(config));
  if (!(o.momentum >= 0.f && o.momentum <= 1.f)) {
    state->error = absl::InvalidArgumentError(
        absl::StrCat(models_internal::LayerLabel(*state),
                     ": momentum must be in [0, 1], got ", o.momentum));
  } else if (!std::isfinite(o.epsilon) || !(o.epsilon > 0.f)) {
    state->error = absl::InvalidArgumentError(
        absl::StrCat(models_internal::LayerLabel(*state),
                     ": epsilon must be finite and > 0, got ", o.epsilon));
  }
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
