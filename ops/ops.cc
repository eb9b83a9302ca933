#include "ops/ops.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/op_util.h"
#include "ops/registry.h"
#include "runtime/node_view.h"
#include "util/status_macros.h"

namespace graphgc {
namespace ops {
namespace {

// The graph of the first valid input; InvalidArgument when none is valid.
absl::StatusOr<Graph*> GraphOf(absl::string_view op, absl::string_view name,
                               std::initializer_list<const Output*> inputs) {
  for (const Output* in : inputs) {
    if (in->valid()) return in->graph();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      op, " '", name.empty() ? op : name, "': input 0 is an empty Output"));
}

absl::StatusOr<Output> Build(Graph& g, absl::string_view op,
                             std::vector<BuildInput> inputs, AttrMap attrs,
                             std::string name,
                             std::vector<NodeHandle> control) {
  GG_ASSIGN_OR_RETURN(NodeHandle h,
                      BuildNode(g, op, name, std::move(inputs),
                                std::move(control), std::move(attrs)));
  return Output(std::move(h), 0);
}

absl::StatusOr<Output> Unary(absl::string_view op, const Output& x,
                             OpOptions options, AttrMap attrs = {}) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf(op, options.name, {&x}));
  return Build(*g, op, {x}, std::move(attrs), std::move(options.name),
               std::move(options.control_inputs));
}

absl::StatusOr<Output> Binary(absl::string_view op, const Output& x,
                              const Output& y, OpOptions options,
                              AttrMap attrs = {}) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf(op, options.name, {&x, &y}));
  return Build(*g, op, {x, y}, std::move(attrs), std::move(options.name),
               std::move(options.control_inputs));
}

// A shape as the int32 vector TensorFlow's ops take (CheckShapeArg checked
// that every dimension fits int32).
absl::StatusOr<Tensor> ShapeTensor(const TensorShape& shape) {
  return op_util::VectorTensor<int32_t>(shape.dim_sizes());
}

absl::Status CheckShapeArg(absl::string_view op, absl::string_view name,
                           const TensorShape& shape, bool allow_unknown) {
  absl::Status s = TensorShape::Validate(shape.dim_sizes(), allow_unknown);
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, " '", name.empty() ? op : name, "': shape: ", s.message()));
  }
  for (int64_t d : shape.dim_sizes()) {
    if (d > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, " '", name.empty() ? op : name, "': dimension ", d,
                       " does not fit int32"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Output> Placeholder(Graph& g, DataType dtype, TensorShape shape,
                                   OpOptions options) {
  return Build(g, "Placeholder", {}, {{"dtype", dtype}, {"shape", shape}},
               std::move(options.name), std::move(options.control_inputs));
}

absl::StatusOr<Output> Const(Graph& g, Tensor value, OpOptions options) {
  DataType dtype = value.dtype();
  return Build(g, "Const", {}, {{"value", std::move(value)}, {"dtype", dtype}},
               std::move(options.name), std::move(options.control_inputs));
}

absl::StatusOr<Output> ScalarLike(const Output& like, double value,
                                  OpOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf("Const", options.name, {&like}));
  switch (like.dtype()) {
    case DT_FLOAT:
      return Const(*g, static_cast<float>(value), std::move(options));
    case DT_INT32:
      return Const(*g, static_cast<int32_t>(value), std::move(options));
    case DT_INT64:
      return Const(*g, static_cast<int64_t>(value), std::move(options));
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("Const: no numeric scalar like ", like.name(), " (",
                       DataTypeString(like.dtype()), ")"));
  }
}

absl::StatusOr<Output> NoOp(Graph& g, OpOptions options) {
  return Build(g, "NoOp", {}, {}, std::move(options.name),
               std::move(options.control_inputs));
}

absl::StatusOr<Output> VarHandleOp(Graph& g, DataType dtype, TensorShape shape,
                                   OpOptions options) {
  return Build(g, "VarHandleOp", {}, {{"dtype", dtype}, {"shape", shape}},
               std::move(options.name), std::move(options.control_inputs));
}

absl::StatusOr<Output> ReadVariableOp(const Output& resource,
                                      OpOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g,
                      GraphOf("ReadVariableOp", options.name, {&resource}));
  AttrMap attrs;
  const NodeView producer(resource);
  if (producer.op() == "VarHandleOp") {
    attrs["dtype"] = GetAttrOr<DataType>(producer.attrs(), "dtype", DT_INVALID);
  }
  return Build(*g, "ReadVariableOp", {resource}, std::move(attrs),
               std::move(options.name), std::move(options.control_inputs));
}

namespace {
absl::StatusOr<Output> AssignLike(absl::string_view op, const Output& resource,
                                  const Output& value, OpOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g,
                      GraphOf(op, options.name, {&resource, &value}));
  AttrMap attrs;
  if (value.valid()) attrs["dtype"] = value.dtype();
  return Build(*g, op, {resource, value}, std::move(attrs),
               std::move(options.name), std::move(options.control_inputs));
}
}  // namespace

absl::StatusOr<Output> AssignVariableOp(const Output& resource,
                                        const Output& value,
                                        OpOptions options) {
  return AssignLike("AssignVariableOp", resource, value, std::move(options));
}
absl::StatusOr<Output> AssignAddVariableOp(const Output& resource,
                                           const Output& value,
                                           OpOptions options) {
  return AssignLike("AssignAddVariableOp", resource, value, std::move(options));
}
absl::StatusOr<Output> AssignSubVariableOp(const Output& resource,
                                           const Output& value,
                                           OpOptions options) {
  return AssignLike("AssignSubVariableOp", resource, value, std::move(options));
}

absl::StatusOr<Output> ResourceApplyGradientDescent(
    const Output& var, const Output& alpha, const Output& delta,
    VariableUpdateOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf("ResourceApplyGradientDescent",
                                         options.name, {&var, &alpha, &delta}));
  AttrMap attrs{{"use_locking", options.use_locking}};
  if (alpha.valid()) attrs["T"] = alpha.dtype();
  return Build(*g, "ResourceApplyGradientDescent", {var, alpha, delta},
               std::move(attrs), std::move(options.name),
               std::move(options.control_inputs));
}

absl::StatusOr<Output> ResourceApplyAdam(
    const Output& var, const Output& m, const Output& v,
    const Output& beta1_power, const Output& beta2_power, const Output& lr,
    const Output& beta1, const Output& beta2, const Output& epsilon,
    const Output& grad, VariableUpdateOptions options) {
  GG_ASSIGN_OR_RETURN(
      Graph * g, GraphOf("ResourceApplyAdam", options.name,
                         {&var, &m, &v, &beta1_power, &beta2_power, &lr, &beta1,
                          &beta2, &epsilon, &grad}));
  AttrMap attrs{{"use_locking", options.use_locking},
                {"use_nesterov", options.use_nesterov}};
  if (grad.valid()) attrs["T"] = grad.dtype();
  return Build(
      *g, "ResourceApplyAdam",
      {var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad},
      std::move(attrs), std::move(options.name),
      std::move(options.control_inputs));
}

namespace {
absl::StatusOr<Output> Random(absl::string_view op, Graph& g,
                              std::vector<BuildInput> shape,
                              RandomOptions options) {
  return Build(g, op, std::move(shape),
               {{"dtype", options.dtype},
                {"seed", options.seed},
                {"seed2", options.seed2}},
               std::move(options.name), std::move(options.control_inputs));
}
}  // namespace

absl::StatusOr<Output> RandomUniform(Graph& g, TensorShape shape,
                                     RandomOptions options) {
  GG_RETURN_IF_ERROR(
      CheckShapeArg("RandomUniform", options.name, shape, false));
  GG_ASSIGN_OR_RETURN(Tensor s, ShapeTensor(shape));
  return Random("RandomUniform", g, {std::move(s)}, std::move(options));
}
absl::StatusOr<Output> RandomUniform(const Output& shape,
                                     RandomOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g,
                      GraphOf("RandomUniform", options.name, {&shape}));
  return Random("RandomUniform", *g, {shape}, std::move(options));
}
absl::StatusOr<Output> RandomStandardNormal(Graph& g, TensorShape shape,
                                            RandomOptions options) {
  GG_RETURN_IF_ERROR(
      CheckShapeArg("RandomStandardNormal", options.name, shape, false));
  GG_ASSIGN_OR_RETURN(Tensor s, ShapeTensor(shape));
  return Random("RandomStandardNormal", g, {std::move(s)}, std::move(options));
}
absl::StatusOr<Output> RandomStandardNormal(const Output& shape,
                                            RandomOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g,
                      GraphOf("RandomStandardNormal", options.name, {&shape}));
  return Random("RandomStandardNormal", *g, {shape}, std::move(options));
}

absl::StatusOr<Output> Identity(const Output& x, OpOptions options) {
  return Unary("Identity", x, std::move(options));
}
absl::StatusOr<Output> StopGradient(const Output& x, OpOptions options) {
  return Unary("StopGradient", x, std::move(options));
}

absl::StatusOr<Output> Reshape(const Output& x, TensorShape shape,
                               OpOptions options) {
  GG_RETURN_IF_ERROR(CheckShapeArg("Reshape", options.name, shape, true));
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf("Reshape", options.name, {&x}));
  GG_ASSIGN_OR_RETURN(Tensor s, ShapeTensor(shape));
  return Build(*g, "Reshape", {x, std::move(s)}, {{"Tshape", DT_INT32}},
               std::move(options.name), std::move(options.control_inputs));
}
absl::StatusOr<Output> Reshape(const Output& x, const Output& shape,
                               OpOptions options) {
  AttrMap attrs;
  if (shape.valid()) attrs["Tshape"] = shape.dtype();
  return Binary("Reshape", x, shape, std::move(options), std::move(attrs));
}

absl::StatusOr<Output> Shape(const Output& x, OpOptions options) {
  return Unary("Shape", x, std::move(options), {{"out_type", DT_INT32}});
}
absl::StatusOr<Output> Size(const Output& x, OpOptions options) {
  return Unary("Size", x, std::move(options), {{"out_type", DT_INT32}});
}
absl::StatusOr<Output> Fill(const Output& dims, const Output& value,
                            OpOptions options) {
  AttrMap attrs{{"index_type", DT_INT32}};
  if (value.valid()) attrs["T"] = value.dtype();
  return Binary("Fill", dims, value, std::move(options), std::move(attrs));
}
absl::StatusOr<Output> ZerosLike(const Output& x, OpOptions options) {
  return Unary("ZerosLike", x, std::move(options));
}
absl::StatusOr<Output> OnesLike(const Output& x, OpOptions options) {
  return Unary("OnesLike", x, std::move(options));
}
absl::StatusOr<Output> Cast(const Output& x, DataType dst, OpOptions options) {
  AttrMap attrs{{"DstT", dst}, {"Truncate", false}};
  if (x.valid()) attrs["SrcT"] = x.dtype();
  return Unary("Cast", x, std::move(options), std::move(attrs));
}
absl::StatusOr<Output> Transpose(const Output& x, std::vector<int32_t> perm,
                                 OpOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf("Transpose", options.name, {&x}));
  GG_ASSIGN_OR_RETURN(Tensor p, op_util::VectorTensor<int32_t>(
                                    absl::Span<const int32_t>(perm)));
  return Build(*g, "Transpose", {x, std::move(p)}, {{"Tperm", DT_INT32}},
               std::move(options.name), std::move(options.control_inputs));
}

absl::StatusOr<BroadcastGradientArgsOutputs> BroadcastGradientArgs(
    const Output& s0, const Output& s1, OpOptions options) {
  GG_ASSIGN_OR_RETURN(
      Graph * g, GraphOf("BroadcastGradientArgs", options.name, {&s0, &s1}));
  GG_ASSIGN_OR_RETURN(
      NodeHandle h, BuildNode(*g, "BroadcastGradientArgs", options.name,
                              {s0, s1}, std::move(options.control_inputs), {}));
  return BroadcastGradientArgsOutputs{Output(h, 0), Output(h, 1)};
}

absl::StatusOr<Output> AddV2(const Output& x, const Output& y,
                             OpOptions options) {
  return Binary("AddV2", x, y, std::move(options));
}
absl::StatusOr<Output> Add(const Output& x, const Output& y,
                           OpOptions options) {
  return Binary("AddV2", x, y, std::move(options));
}
absl::StatusOr<Output> Sub(const Output& x, const Output& y,
                           OpOptions options) {
  return Binary("Sub", x, y, std::move(options));
}
absl::StatusOr<Output> Mul(const Output& x, const Output& y,
                           OpOptions options) {
  return Binary("Mul", x, y, std::move(options));
}
absl::StatusOr<Output> RealDiv(const Output& x, const Output& y,
                               OpOptions options) {
  return Binary("RealDiv", x, y, std::move(options));
}
absl::StatusOr<Output> Maximum(const Output& x, const Output& y,
                               OpOptions options) {
  return Binary("Maximum", x, y, std::move(options));
}
absl::StatusOr<Output> Minimum(const Output& x, const Output& y,
                               OpOptions options) {
  return Binary("Minimum", x, y, std::move(options));
}
absl::StatusOr<Output> Equal(const Output& x, const Output& y,
                             OpOptions options) {
  return Binary("Equal", x, y, std::move(options));
}
absl::StatusOr<Output> Greater(const Output& x, const Output& y,
                               OpOptions options) {
  return Binary("Greater", x, y, std::move(options));
}
absl::StatusOr<Output> GreaterEqual(const Output& x, const Output& y,
                                    OpOptions options) {
  return Binary("GreaterEqual", x, y, std::move(options));
}
absl::StatusOr<Output> Less(const Output& x, const Output& y,
                            OpOptions options) {
  return Binary("Less", x, y, std::move(options));
}
absl::StatusOr<Output> LessEqual(const Output& x, const Output& y,
                                 OpOptions options) {
  return Binary("LessEqual", x, y, std::move(options));
}

absl::StatusOr<Output> AddN(absl::Span<const Output> inputs,
                            OpOptions options) {
  if (inputs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("AddN '", options.name.empty() ? "AddN" : options.name,
                     "': needs at least one input"));
  }
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf("AddN", options.name, {&inputs[0]}));
  std::vector<BuildInput> in(inputs.begin(), inputs.end());
  return Build(*g, "AddN", std::move(in), {}, std::move(options.name),
               std::move(options.control_inputs));
}

absl::StatusOr<Output> Neg(const Output& x, OpOptions options) {
  return Unary("Neg", x, std::move(options));
}
absl::StatusOr<Output> Square(const Output& x, OpOptions options) {
  return Unary("Square", x, std::move(options));
}
absl::StatusOr<Output> Sqrt(const Output& x, OpOptions options) {
  return Unary("Sqrt", x, std::move(options));
}
absl::StatusOr<Output> Exp(const Output& x, OpOptions options) {
  return Unary("Exp", x, std::move(options));
}
absl::StatusOr<Output> Log(const Output& x, OpOptions options) {
  return Unary("Log", x, std::move(options));
}
absl::StatusOr<Output> Sigmoid(const Output& x, OpOptions options) {
  return Unary("Sigmoid", x, std::move(options));
}
absl::StatusOr<Output> Tanh(const Output& x, OpOptions options) {
  return Unary("Tanh", x, std::move(options));
}

absl::StatusOr<Output> MatMul(const Output& a, const Output& b,
                              MatMulOptions options) {
  return Binary(
      "MatMul", a, b,
      OpOptions{std::move(options.name), std::move(options.control_inputs)},
      {{"transpose_a", options.transpose_a},
       {"transpose_b", options.transpose_b}});
}

namespace {
absl::StatusOr<Output> Reduce(absl::string_view op, const Output& x,
                              ReduceOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf(op, options.name, {&x}));
  std::vector<int32_t> axes;
  if (options.axes.empty()) {
    for (int i = 0; i < x.shape().dims(); ++i) axes.push_back(i);
  } else {
    for (int64_t a : options.axes) {
      // Not narrowed: 2^32 + 1 must not become axis 1.
      if (a < INT32_MIN || a > INT32_MAX) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, " '", options.name.empty() ? op : options.name, "': axis ", a,
            " is out of range for a tensor of rank ", x.shape().dims()));
      }
      axes.push_back(static_cast<int32_t>(a));
    }
  }
  GG_ASSIGN_OR_RETURN(Tensor t, op_util::VectorTensor<int32_t>(
                                    absl::Span<const int32_t>(axes)));
  return Build(*g, op, {x, std::move(t)},
               {{"keep_dims", options.keep_dims}, {"Tidx", DT_INT32}},
               std::move(options.name), std::move(options.control_inputs));
}
}  // namespace

absl::StatusOr<Output> Sum(const Output& x, ReduceOptions options) {
  return Reduce("Sum", x, std::move(options));
}
absl::StatusOr<Output> Mean(const Output& x, ReduceOptions options) {
  return Reduce("Mean", x, std::move(options));
}
absl::StatusOr<Output> Sum(const Output& x, const Output& axes,
                           ReduceOptions options) {
  AttrMap attrs{{"keep_dims", options.keep_dims}};
  if (axes.valid()) attrs["Tidx"] = axes.dtype();
  return Binary(
      "Sum", x, axes,
      OpOptions{std::move(options.name), std::move(options.control_inputs)},
      std::move(attrs));
}

absl::StatusOr<Output> ArgMax(const Output& x, int64_t axis,
                              ArgMaxOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf("ArgMax", options.name, {&x}));
  return Build(*g, "ArgMax",
               {x, Tensor::Scalar<int32_t>(static_cast<int32_t>(axis))},
               {{"output_type", options.output_type}, {"Tidx", DT_INT32}},
               std::move(options.name), std::move(options.control_inputs));
}

absl::StatusOr<Output> BiasAdd(const Output& value, const Output& bias,
                               OpOptions options) {
  return Binary("BiasAdd", value, bias, std::move(options),
                {{"data_format", std::string("NHWC")}});
}
absl::StatusOr<Output> BiasAddGrad(const Output& out_backprop,
                                   OpOptions options) {
  return Unary("BiasAddGrad", out_backprop, std::move(options),
               {{"data_format", std::string("NHWC")}});
}
absl::StatusOr<Output> Relu(const Output& features, OpOptions options) {
  return Unary("Relu", features, std::move(options));
}
absl::StatusOr<Output> ReluGrad(const Output& gradients, const Output& features,
                                OpOptions options) {
  return Binary("ReluGrad", gradients, features, std::move(options));
}
absl::StatusOr<Output> Softmax(const Output& logits, OpOptions options) {
  return Unary("Softmax", logits, std::move(options));
}
absl::StatusOr<Output> LogSoftmax(const Output& logits, OpOptions options) {
  return Unary("LogSoftmax", logits, std::move(options));
}

absl::StatusOr<SoftmaxCrossEntropyOutputs> SparseSoftmaxCrossEntropyWithLogits(
    const Output& features, const Output& labels, OpOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf("SparseSoftmaxCrossEntropyWithLogits",
                                         options.name, {&features, &labels}));
  AttrMap attrs;
  if (labels.valid()) attrs["Tlabels"] = labels.dtype();
  GG_ASSIGN_OR_RETURN(
      NodeHandle h,
      BuildNode(*g, "SparseSoftmaxCrossEntropyWithLogits", options.name,
                {features, labels}, std::move(options.control_inputs),
                std::move(attrs)));
  return SoftmaxCrossEntropyOutputs{Output(h, 0), Output(h, 1)};
}

namespace {
AttrMap ConvAttrMap(const Conv2DOptions& o, DataType t) {
  return {{"T", t},
          {"strides", o.strides},
          {"padding", o.padding},
          {"dilations", o.dilations},
          {"data_format", o.data_format}};
}
AttrMap PoolAttrMap(const PoolOptions& o) {
  return {{"ksize", o.ksize},
          {"strides", o.strides},
          {"padding", o.padding},
          {"data_format", o.data_format}};
}
}  // namespace

absl::StatusOr<Output> Conv2D(const Output& input, const Output& filter,
                              Conv2DOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g,
                      GraphOf("Conv2D", options.name, {&input, &filter}));
  return Build(*g, "Conv2D", {input, filter},
               ConvAttrMap(options, input.valid() ? input.dtype() : DT_FLOAT),
               std::move(options.name), std::move(options.control_inputs));
}
absl::StatusOr<Output> Conv2DBackpropInput(const Output& input_sizes,
                                           const Output& filter,
                                           const Output& out_backprop,
                                           Conv2DOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g,
                      GraphOf("Conv2DBackpropInput", options.name,
                              {&input_sizes, &filter, &out_backprop}));
  return Build(*g, "Conv2DBackpropInput", {input_sizes, filter, out_backprop},
               ConvAttrMap(options, filter.valid() ? filter.dtype() : DT_FLOAT),
               std::move(options.name), std::move(options.control_inputs));
}
absl::StatusOr<Output> Conv2DBackpropFilter(const Output& input,
                                            const Output& filter_sizes,
                                            const Output& out_backprop,
                                            Conv2DOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g,
                      GraphOf("Conv2DBackpropFilter", options.name,
                              {&input, &filter_sizes, &out_backprop}));
  return Build(*g, "Conv2DBackpropFilter", {input, filter_sizes, out_backprop},
               ConvAttrMap(options, input.valid() ? input.dtype() : DT_FLOAT),
               std::move(options.name), std::move(options.control_inputs));
}

absl::StatusOr<Output> MaxPool(const Output& input, PoolOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf("MaxPool", options.name, {&input}));
  return Build(*g, "MaxPool", {input}, PoolAttrMap(options),
               std::move(options.name), std::move(options.control_inputs));
}
absl::StatusOr<Output> MaxPoolGrad(const Output& orig_input,
                                   const Output& orig_output,
                                   const Output& grad, PoolOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g, GraphOf("MaxPoolGrad", options.name,
                                         {&orig_input, &orig_output, &grad}));
  return Build(*g, "MaxPoolGrad", {orig_input, orig_output, grad},
               PoolAttrMap(options), std::move(options.name),
               std::move(options.control_inputs));
}

absl::StatusOr<FusedBatchNormOutputs> FusedBatchNormV3(
    const Output& x, const Output& scale, const Output& offset,
    const Output& mean, const Output& variance, FusedBatchNormOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g,
                      GraphOf("FusedBatchNormV3", options.name,
                              {&x, &scale, &offset, &mean, &variance}));
  AttrMap attrs{{"epsilon", options.epsilon},
                {"exponential_avg_factor", options.exponential_avg_factor},
                {"data_format", options.data_format},
                {"is_training", options.is_training}};
  if (scale.valid()) attrs["U"] = scale.dtype();
  GG_ASSIGN_OR_RETURN(
      NodeHandle h,
      BuildNode(*g, "FusedBatchNormV3", options.name,
                {x, scale, offset, mean, variance},
                std::move(options.control_inputs), std::move(attrs)));
  return FusedBatchNormOutputs{Output(h, 0), Output(h, 1), Output(h, 2),
                               Output(h, 3), Output(h, 4), Output(h, 5)};
}

absl::StatusOr<FusedBatchNormGradOutputs> FusedBatchNormGradV3(
    const Output& y_backprop, const Output& x, const Output& scale,
    const Output& reserve_space_1, const Output& reserve_space_2,
    const Output& reserve_space_3, FusedBatchNormOptions options) {
  GG_ASSIGN_OR_RETURN(Graph * g,
                      GraphOf("FusedBatchNormGradV3", options.name,
                              {&y_backprop, &x, &scale, &reserve_space_1,
                               &reserve_space_2, &reserve_space_3}));
  AttrMap attrs{{"epsilon", options.epsilon},
                {"data_format", options.data_format},
                {"is_training", options.is_training}};
  if (reserve_space_1.valid()) attrs["U"] = reserve_space_1.dtype();
  GG_ASSIGN_OR_RETURN(
      NodeHandle h,
      BuildNode(*g, "FusedBatchNormGradV3", options.name,
                {y_backprop, x, scale, reserve_space_1, reserve_space_2,
                 reserve_space_3},
                std::move(options.control_inputs), std::move(attrs)));
  return FusedBatchNormGradOutputs{Output(h, 0), Output(h, 1), Output(h, 2),
                                   Output(h, 3), Output(h, 4)};
}

}  // namespace ops
}  // namespace graphgc
