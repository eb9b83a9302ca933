// The image layers: Conv2D, MaxPooling2D and BatchNormalization (NHWC),
// their shape checks, variables and forward nodes (TensorFlow's Conv2D,
// MaxPool and FusedBatchNormV3 ops).
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "models/layer_state.h"
#include "models/training.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::Status NotAnImage(const LayerState& layer, const TensorShape& in) {
  return absl::InvalidArgumentError(absl::StrCat(
      LayerLabel(layer),
      ": takes NHWC images [batch, height, width, channels], (None, h, w, "
      "c), but gets ",
      KerasShape(in)));
}

// One spatial output size of a window of `k` at `stride` over `in`, as
// TensorFlow computes it: SAME ceil(in / stride), VALID ceil((in - k + 1) /
// stride), which needs k <= in. Written so that nothing can overflow.
absl::StatusOr<int64_t> SpatialSize(const LayerState& layer,
                                    const TensorShape& in, int axis,
                                    const std::string& window_name) {
  const int64_t size = in[axis];
  const int64_t k = layer.window[axis];
  const int64_t stride = layer.strides[axis];
  if (layer.padding == "same") return (size - 1) / stride + 1;
  if (k > size) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": its ", layer.window[0], "x", layer.window[1], " ",
        window_name, " does not fit inputs ", KerasShape(in),
        " with padding \"valid\" (use smaller windows, larger inputs or "
        "padding \"same\")"));
  }
  return (size - k) / stride + 1;
}

std::vector<int64_t> Nhwc(const std::vector<int64_t>& hw) {
  return {1, hw[0], hw[1], 1};
}

}  // namespace

absl::StatusOr<TensorShape> Conv2DOutputShape(const LayerState& layer,
                                              const TensorShape& in) {
  if (in.dims() != 3) return NotAnImage(layer, in);
  GG_ASSIGN_OR_RETURN(int64_t h, SpatialSize(layer, in, 0, "kernel"));
  GG_ASSIGN_OR_RETURN(int64_t w, SpatialSize(layer, in, 1, "kernel"));
  return TensorShape({h, w, layer.units});
}

absl::StatusOr<TensorShape> MaxPooling2DOutputShape(const LayerState& layer,
                                                    const TensorShape& in) {
  if (in.dims() != 3) return NotAnImage(layer, in);
  GG_ASSIGN_OR_RETURN(int64_t h, SpatialSize(layer, in, 0, "pool"));
  GG_ASSIGN_OR_RETURN(int64_t w, SpatialSize(layer, in, 1, "pool"));
  return TensorShape({h, w, in[2]});
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

absl::Status BuildConv2D(LayerState& layer, Graph& graph, const TensorShape& in,
                         const std::string& scope, Session& session,
                         std::vector<Variable>& vars) {
  const TensorShape kernel_shape = {layer.window[0], layer.window[1], in[2],
                                    layer.units};
  // CheckLayer bounded the kernel's element count, so these cannot fail;
  // checked all the same.
  int64_t receptive = 0, fan_in = 0, fan_out = 0;
  if (!MultiplySizes(layer.window[0], layer.window[1], &receptive) ||
      !MultiplySizes(receptive, in[2], &fan_in) ||
      !MultiplySizes(receptive, layer.units, &fan_out)) {
    return absl::InvalidArgumentError(
        absl::StrCat(LayerLabel(layer), ": kernel ", kernel_shape.DebugString(),
                     " has too many elements"));
  }
  return BuildKernelAndBias({.kernel_shape = kernel_shape,
                             .fan_in = fan_in,
                             .fan_out = fan_out,
                             .use_bias = layer.conv.use_bias,
                             .seed = layer.conv.seed},
                            graph, scope, session, vars);
}

absl::Status BuildBatchNormalization(Graph& graph, const TensorShape& in,
                                     const std::string& scope, Session& session,
                                     std::vector<Variable>& vars) {
  const std::string label = "Layer '" + scope + "'";
  const TensorShape shape = {in[in.dims() - 1]};
  struct Spec {
    const char* name;
    bool trainable;
    float init;
  };
  const Spec specs[] = {{"gamma", true, 1.f},
                        {"beta", true, 0.f},
                        {"moving_mean", false, 0.f},
                        {"moving_variance", false, 1.f}};
  std::vector<Tensor> init;
  for (const Spec& spec : specs) {
    GG_ASSIGN_OR_RETURN(Variable v, MakeVariable(graph, scope + "/" + spec.name,
                                                 shape, label, spec.trainable));
    GG_ASSIGN_OR_RETURN(Tensor value, Filled(shape, spec.init, v.name));
    vars.push_back(std::move(v));
    init.push_back(std::move(value));
  }
  return AssignAll(vars, std::move(init), session);
}

absl::StatusOr<LayerOutputs> ApplyConv2D(const LayerState& layer,
                                         const BuiltLayer& built,
                                         const Output& x) {
  const std::string& scope = built.name();
  GG_ASSIGN_OR_RETURN(
      Output y, ops::Conv2D(x, built.variables[0].read,
                            {.name = scope + "/Conv2D",
                             .strides = Nhwc(layer.strides),
                             .padding = absl::AsciiStrToUpper(layer.padding)}));
  if (layer.conv.use_bias) {
    GG_ASSIGN_OR_RETURN(y, ops::BiasAdd(y, built.variables[1].read,
                                        {.name = scope + "/BiasAdd"}));
  }
  LayerOutputs out{.pre_activation = y, .output = y};
  GG_ASSIGN_OR_RETURN(out.output, ApplyActivation(layer.activation, y, scope));
  out.softmax = layer.activation == "softmax";
  return out;
}

absl::StatusOr<LayerOutputs> ApplyMaxPooling2D(const LayerState& layer,
                                               const BuiltLayer& built,
                                               const Output& x) {
  GG_ASSIGN_OR_RETURN(
      Output y,
      ops::MaxPool(x, {.name = built.name() + "/MaxPool",
                       .ksize = Nhwc(layer.window),
                       .strides = Nhwc(layer.strides),
                       .padding = absl::AsciiStrToUpper(layer.padding)}));
  return LayerOutputs{.pre_activation = y, .output = y};
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
  const BatchNormalizationOptions& o = layer.batch_norm;
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

}  // namespace models_internal
}  // namespace graphgc
