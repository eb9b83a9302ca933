// ops/conv_ops.h
//
// Registration of the ops convolutional layers need, with TensorFlow's op
// names, inputs, outputs and attributes: Conv2D, Conv2DBackpropInput,
// Conv2DBackpropFilter, MaxPool, MaxPoolGrad, AvgPool, AvgPoolGrad,
// FusedBatchNormV3 and FusedBatchNormGradV3 (kernels, shape functions,
// gradients). float32 and
// data_format "NHWC" only; VALID and SAME padding (EXPLICIT, dilations other
// than 1 and other layouts are refused with a status). RegisterCoreOps calls
// it once when the global registry is built. Users build the others through
// ops/ops.h, AvgPool and AvgPoolGrad through the builders below.
//
// Thread safety: call only while the registry is being built.
#ifndef GRAPHGC_OPS_CONV_OPS_H_
#define GRAPHGC_OPS_CONV_OPS_H_

#include "absl/status/statusor.h"
#include "ops/ops.h"
#include "ops/registry.h"
#include "runtime/graph.h"

namespace graphgc {

void RegisterConvOps(OpRegistry& registry);

namespace ops {

// AvgPool: the mean of each window (ksize, strides [1, h, w, 1]); with SAME
// padding, of the window's pixels inside the input only, as TensorFlow.
absl::StatusOr<Output> AvgPool(const Output& value, PoolOptions options = {});
// The gradient of AvgPool's input of shape `orig_input_shape` (an int32
// vector of 4 sizes): each window's `grad` shared evenly by its pixels.
absl::StatusOr<Output> AvgPoolGrad(const Output& orig_input_shape,
                                   const Output& grad,
                                   PoolOptions options = {});

}  // namespace ops

}  // namespace graphgc

#endif  // GRAPHGC_OPS_CONV_OPS_H_
