// ops/ops.h
//
// Op builders: one function per TensorFlow op type, in namespace
// graphgc::ops. Each takes its graph from its inputs (ops::MatMul(x, w));
// graph-less leaves (Placeholder, Const, VarHandleOp, random ops, NoOp) take
// the graph first. Every builder checks shapes and dtypes when the node is
// built and returns a status naming the op, the node and the problem; on
// error the graph is unchanged (helper constants, e.g. Sum's axes, are only
// created once every check has passed).
//
// The trailing options carry the node name (empty: the op type, uniqued by
// the graph) and control inputs, plus op-specific fields after them.
//
// Thread safety: builders may be called from any thread (the graph locks).
//
// Example:
//   Output x = ops::Placeholder(g, DT_FLOAT, {-1, 3}).value();
//   Output y = ops::MatMul(x, w, {.name = "dense/MatMul"}).value();
//   Output loss = ops::Mean(ops::Square(y).value()).value();
#ifndef GRAPHGC_OPS_OPS_H_
#define GRAPHGC_OPS_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace ops {

struct OpOptions {
  std::string name;
  std::vector<NodeHandle> control_inputs;
};

struct MatMulOptions {
  std::string name;
  std::vector<NodeHandle> control_inputs;
  bool transpose_a = false;
  bool transpose_b = false;
};

// Sum / Mean: `axes` empty reduces over every axis; negative axes count from
// the end. An axis named twice (as 1 and 1, or 1 and -1 of a rank-2 input)
// is InvalidArgument, as in TensorFlow: when the graph is built for
// constant axes, from Session::Run for axes known only at run time.
struct ReduceOptions {
  std::string name;
  std::vector<NodeHandle> control_inputs;
  std::vector<int64_t> axes;
  bool keep_dims = false;
};

struct ArgMaxOptions {
  std::string name;
  std::vector<NodeHandle> control_inputs;
  DataType output_type = DT_INT64;
};

// RandomUniform / RandomStandardNormal: seed == seed2 == 0 means
// non-reproducible; otherwise the node's sequence is fixed by the seeds.
struct RandomOptions {
  std::string name;
  std::vector<NodeHandle> control_inputs;
  DataType dtype = DT_FLOAT;
  int64_t seed = 0;
  int64_t seed2 = 0;
};

struct VariableUpdateOptions {
  std::string name;
  std::vector<NodeHandle> control_inputs;
  bool use_locking = false;
  bool use_nesterov = false;  // ResourceApplyAdam only
};

// An op with no outputs (AssignVariableOp, ResourceApply*, NoOp) returns an
// Output with index 0 that names the node: use it as a Session::Run target
// or its handle() as a control input, never as a data input.

// --- leaves ---
absl::StatusOr<Output> Placeholder(Graph& g, DataType dtype, TensorShape shape,
                                   OpOptions options = {});
absl::StatusOr<Output> Const(Graph& g, Tensor value, OpOptions options = {});
// A scalar constant: ops::Const(g, 2.0f).
template <typename T>
requires requires { DataTypeToEnum<T>::value; }
absl::StatusOr<Output> Const(Graph& g, T value, OpOptions options = {}) {
  return Const(g, Tensor::Scalar<T>(value), std::move(options));
}
// A scalar constant of `like`'s dtype (float, int32 or int64), in its graph.
absl::StatusOr<Output> ScalarLike(const Output& like, double value,
                                  OpOptions options = {});
absl::StatusOr<Output> NoOp(Graph& g, OpOptions options = {});

// --- variables ---
absl::StatusOr<Output> VarHandleOp(Graph& g, DataType dtype, TensorShape shape,
                                   OpOptions options = {});
absl::StatusOr<Output> ReadVariableOp(const Output& resource,
                                      OpOptions options = {});
absl::StatusOr<Output> AssignVariableOp(const Output& resource,
                                        const Output& value,
                                        OpOptions options = {});
absl::StatusOr<Output> AssignAddVariableOp(const Output& resource,
                                           const Output& value,
                                           OpOptions options = {});
absl::StatusOr<Output> AssignSubVariableOp(const Output& resource,
                                           const Output& value,
                                           OpOptions options = {});
// var -= alpha * delta.
absl::StatusOr<Output> ResourceApplyGradientDescent(
    const Output& var, const Output& alpha, const Output& delta,
    VariableUpdateOptions options = {});
// TensorFlow's Adam step: lr_t = lr * sqrt(1 - beta2_power) /
// (1 - beta1_power); m += (g - m) * (1 - beta1); v += (g^2 - v) *
// (1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon).
absl::StatusOr<Output> ResourceApplyAdam(
    const Output& var, const Output& m, const Output& v,
    const Output& beta1_power, const Output& beta2_power, const Output& lr,
    const Output& beta1, const Output& beta2, const Output& epsilon,
    const Output& grad, VariableUpdateOptions options = {});

// --- random ---
absl::StatusOr<Output> RandomUniform(Graph& g, TensorShape shape,
                                     RandomOptions options = {});
absl::StatusOr<Output> RandomUniform(const Output& shape,
                                     RandomOptions options = {});
absl::StatusOr<Output> RandomStandardNormal(Graph& g, TensorShape shape,
                                            RandomOptions options = {});
absl::StatusOr<Output> RandomStandardNormal(const Output& shape,
                                            RandomOptions options = {});

// --- array ---
absl::StatusOr<Output> Identity(const Output& x, OpOptions options = {});
absl::StatusOr<Output> StopGradient(const Output& x, OpOptions options = {});
// Reshape: at most one -1 in the shape, resolved from x's element count.
// A shape whose dimensions hold more than kMaxTensorElements elements (or
// whose product would wrap int64) is InvalidArgument "too many elements",
// when built for a constant shape, from Session::Run for a fed one.
absl::StatusOr<Output> Reshape(const Output& x, TensorShape shape,
                               OpOptions options = {});
absl::StatusOr<Output> Reshape(const Output& x, const Output& shape,
                               OpOptions options = {});
absl::StatusOr<Output> Shape(const Output& x, OpOptions options = {});
absl::StatusOr<Output> Size(const Output& x, OpOptions options = {});
absl::StatusOr<Output> Fill(const Output& dims, const Output& value,
                            OpOptions options = {});
absl::StatusOr<Output> ZerosLike(const Output& x, OpOptions options = {});
absl::StatusOr<Output> OnesLike(const Output& x, OpOptions options = {});
absl::StatusOr<Output> Cast(const Output& x, DataType dst,
                            OpOptions options = {});
absl::StatusOr<Output> Transpose(const Output& x, std::vector<int32_t> perm,
                                 OpOptions options = {});
// Reduction axes for the gradients of a broadcasting binary op.
struct BroadcastGradientArgsOutputs {
  Output r0;
  Output r1;
};
absl::StatusOr<BroadcastGradientArgsOutputs> BroadcastGradientArgs(
    const Output& s0, const Output& s1, OpOptions options = {});

// --- math (binary ops broadcast as NumPy / TensorFlow do) ---
absl::StatusOr<Output> AddV2(const Output& x, const Output& y,
                             OpOptions options = {});
absl::StatusOr<Output> Add(const Output& x, const Output& y,
                           OpOptions options = {});  // builds AddV2
absl::StatusOr<Output> Sub(const Output& x, const Output& y,
                           OpOptions options = {});
absl::StatusOr<Output> Mul(const Output& x, const Output& y,
                           OpOptions options = {});
absl::StatusOr<Output> RealDiv(const Output& x, const Output& y,
                               OpOptions options = {});
absl::StatusOr<Output> Maximum(const Output& x, const Output& y,
                               OpOptions options = {});
absl::StatusOr<Output> Minimum(const Output& x, const Output& y,
                               OpOptions options = {});
absl::StatusOr<Output> Equal(const Output& x, const Output& y,
                             OpOptions options = {});
absl::StatusOr<Output> Greater(const Output& x, const Output& y,
                               OpOptions options = {});
absl::StatusOr<Output> GreaterEqual(const Output& x, const Output& y,
                                    OpOptions options = {});
absl::StatusOr<Output> Less(const Output& x, const Output& y,
                            OpOptions options = {});
absl::StatusOr<Output> LessEqual(const Output& x, const Output& y,
                                 OpOptions options = {});
absl::StatusOr<Output> AddN(absl::Span<const Output> inputs,
                            OpOptions options = {});
absl::StatusOr<Output> Neg(const Output& x, OpOptions options = {});
absl::StatusOr<Output> Square(const Output& x, OpOptions options = {});
absl::StatusOr<Output> Sqrt(const Output& x, OpOptions options = {});
absl::StatusOr<Output> Exp(const Output& x, OpOptions options = {});
absl::StatusOr<Output> Log(const Output& x, OpOptions options = {});
absl::StatusOr<Output> Sigmoid(const Output& x, OpOptions options = {});
absl::StatusOr<Output> Tanh(const Output& x, OpOptions options = {});
absl::StatusOr<Output> MatMul(const Output& a, const Output& b,
                              MatMulOptions options = {});
absl::StatusOr<Output> Sum(const Output& x, ReduceOptions options = {});
absl::StatusOr<Output> Mean(const Output& x, ReduceOptions options = {});
// With the axes as a graph input (its value known only at run time).
absl::StatusOr<Output> Sum(const Output& x, const Output& axes,
                           ReduceOptions options = {});
absl::StatusOr<Output> ArgMax(const Output& x, int64_t axis,
                              ArgMaxOptions options = {});

// --- nn ---
absl::StatusOr<Output> BiasAdd(const Output& value, const Output& bias,
                               OpOptions options = {});
absl::StatusOr<Output> BiasAddGrad(const Output& out_backprop,
                                   OpOptions options = {});
absl::StatusOr<Output> Relu(const Output& features, OpOptions options = {});
absl::StatusOr<Output> ReluGrad(const Output& gradients, const Output& features,
                                OpOptions options = {});
absl::StatusOr<Output> Softmax(const Output& logits, OpOptions options = {});
absl::StatusOr<Output> LogSoftmax(const Output& logits, OpOptions options = {});
struct SoftmaxCrossEntropyOutputs {
  Output loss;      // [batch]
  Output backprop;  // [batch, classes]
};
absl::StatusOr<SoftmaxCrossEntropyOutputs> SparseSoftmaxCrossEntropyWithLogits(
    const Output& features, const Output& labels, OpOptions options = {});

// --- convolution layers (NHWC, float32; TensorFlow's ops and attributes) ---

// Conv2D and its backprop ops. strides and dilations are [1, h, w, 1];
// padding "VALID" or "SAME" (TensorFlow's rule: SAME pads
// max((out - 1) * stride + k - in, 0), half of it, rounded down, before).
struct Conv2DOptions {
  std::string name;
  std::vector<NodeHandle> control_inputs;
  std::vector<int64_t> strides = {1, 1, 1, 1};
  std::string padding = "VALID";
  std::vector<int64_t> dilations = {1, 1, 1, 1};  // only 1s are supported
  std::string data_format = "NHWC";               // only NHWC
};
// input [batch, h, w, in_c], filter [k_h, k_w, in_c, out_c].
absl::StatusOr<Output> Conv2D(const Output& input, const Output& filter,
                              Conv2DOptions options = {});
// The gradient of Conv2D's input of shape `input_sizes` (int32 [4]).
absl::StatusOr<Output> Conv2DBackpropInput(const Output& input_sizes,
                                           const Output& filter,
                                           const Output& out_backprop,
                                           Conv2DOptions options = {});
// The gradient of Conv2D's filter of shape `filter_sizes` (int32 [4]).
absl::StatusOr<Output> Conv2DBackpropFilter(const Output& input,
                                            const Output& filter_sizes,
                                            const Output& out_backprop,
                                            Conv2DOptions options = {});

// MaxPool and MaxPoolGrad: ksize and strides are [1, h, w, 1] (Keras'
// MaxPooling2D defaults: 2 x 2 windows at stride 2, VALID).
struct PoolOptions {
  std::string name;
  std::vector<NodeHandle> control_inputs;
  std::vector<int64_t> ksize = {1, 2, 2, 1};
  std::vector<int64_t> strides = {1, 2, 2, 1};
  std::string padding = "VALID";
  std::string data_format = "NHWC";  // only NHWC
};
absl::StatusOr<Output> MaxPool(const Output& input, PoolOptions options = {});
// The gradient of MaxPool's input: each window's `grad` goes to the window's
// maximum in orig_input (the first in row-major order on ties).
absl::StatusOr<Output> MaxPoolGrad(const Output& orig_input,
                                   const Output& orig_output,
                                   const Output& grad,
                                   PoolOptions options = {});

// FusedBatchNormV3 over a 4-D NHWC x (TensorFlow's op takes no other rank),
// per channel. Training: normalises with the batch's mean and biased
// variance; batch_mean and batch_variance are the batch's mean and unbiased
// variance (or, with exponential_avg_factor f != 1, (1 - f) * mean + f *
// batch value, mean and variance being the running averages), reserve
// spaces 1 and 2 the mean and biased variance the gradient needs, reserve
// space 3 a scalar 0. Inference: normalises with the given mean and
// variance, which batch_mean, batch_variance and reserve spaces 1 and 2
// return as they are.
struct FusedBatchNormOptions {
  std::string name;
  std::vector<NodeHandle> control_inputs;
  float epsilon = 0.0001f;
  float exponential_avg_factor = 1.0f;  // not an attribute of the grad op
  std::string data_format = "NHWC";     // only NHWC
  bool is_training = true;
};
struct FusedBatchNormOutputs {
  Output y;
  Output batch_mean;
  Output batch_variance;
  Output reserve_space_1;
  Output reserve_space_2;
  Output reserve_space_3;
};
absl::StatusOr<FusedBatchNormOutputs> FusedBatchNormV3(
    const Output& x, const Output& scale, const Output& offset,
    const Output& mean, const Output& variance,
    FusedBatchNormOptions options = {});
struct FusedBatchNormGradOutputs {
  Output x_backprop;
  Output scale_backprop;
  Output offset_backprop;
  Output reserve_space_4;  // empty [0]
  Output reserve_space_5;  // empty [0]
};
// Training: reserve spaces 1 and 2 are FusedBatchNormV3's; inference: the
// population mean and variance it was given.
absl::StatusOr<FusedBatchNormGradOutputs> FusedBatchNormGradV3(
    const Output& y_backprop, const Output& x, const Output& scale,
    const Output& reserve_space_1, const Output& reserve_space_2,
    const Output& reserve_space_3, FusedBatchNormOptions options = {});

}  // namespace ops
}  // namespace graphgc

#endif  // GRAPHGC_OPS_OPS_H_
