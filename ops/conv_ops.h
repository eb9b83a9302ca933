// ops/conv_ops.h
//
// Registration of the ops convolutional layers need, with TensorFlow's op
// names, inputs, outputs and attributes: Conv2D, Conv2DBackpropInput,
// Conv2DBackpropFilter, MaxPool, MaxPoolGrad, FusedBatchNormV3 and
// FusedBatchNormGradV3 (kernels, shape functions, gradients). float32 and
// data_format "NHWC" only; VALID and SAME padding (EXPLICIT, dilations other
// than 1 and other layouts are refused with a status). RegisterCoreOps calls
// it once when the global registry is built. Private to //ops: users build
// these ops through ops/ops.h.
//
// Thread safety: call only while the registry is being built.
#ifndef GRAPHGC_OPS_CONV_OPS_H_
#define GRAPHGC_OPS_CONV_OPS_H_

#include "ops/registry.h"

namespace graphgc {

void RegisterConvOps(OpRegistry& registry);

}  // namespace graphgc

#endif  // GRAPHGC_OPS_CONV_OPS_H_
