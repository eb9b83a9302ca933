// ops/op_util.h
//
// Private helpers shared by the op files (math_ops.cc, nn_ops.cc, ...):
// dtype dispatch for kernels, shape-function checks (dtypes, broadcasting,
// constant integer inputs) and gradient-building helpers (undoing a
// broadcast, node names under "gradients/"). Not part of //ops's public API.
//
// Thread safety: stateless functions.
#ifndef GRAPHGC_OPS_OP_UTIL_H_
#define GRAPHGC_OPS_OP_UTIL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "ops/registry.h"
#include "runtime/op_def.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace op_util {

// Calls f(T{}) with T the C++ type of `dtype` among float, int32, int64;
// Unimplemented for any other dtype.
template <typename F>
absl::Status DispatchNumeric(DataType dtype, F&& f) {
  switch (dtype) {
    case DT_FLOAT:
      return f(float{});
    case DT_INT32:
      return f(int32_t{});
    case DT_INT64:
      return f(int64_t{});
    default:
      return absl::UnimplementedError(
          absl::StrCat("no kernel for dtype ", DataTypeString(dtype)));
  }
}

// As DispatchNumeric, plus bool.
template <typename F>
absl::Status DispatchAll(DataType dtype, F&& f) {
  if (dtype == DT_BOOL) return f(bool{});
  return DispatchNumeric(dtype, std::forward<F>(f));
}

// --- shape functions ---

// OK when `dtype` is one of `allowed`; else "<what> must be one of {float,
// int32}, got bool".
absl::Status CheckDtype(DataType dtype, std::initializer_list<DataType> allowed,
                        absl::string_view what);
// OK when the input's dtype equals attr "T".
absl::Status CheckInputsMatchT(const AttrMap& attrs,
                               absl::Span<const InputInfo> inputs,
                               std::initializer_list<DataType> allowed);
// NumPy broadcasting of static shapes (-1 unknown). InvalidArgument
// "incompatible shapes [2,3] and [4]" when they cannot broadcast.
absl::StatusOr<TensorShape> BroadcastShapes(const TensorShape& a,
                                            const TensorShape& b);
// The elements of an int32 or int64 tensor.
absl::StatusOr<std::vector<int64_t>> IntValues(const Tensor& t);
// The value of a shape-like input when known at build time (Const, or
// Shape(x) of a partially known x); nullopt otherwise.
std::optional<TensorShape> KnownShapeValue(const InputInfo& in);
// Normalises `axis` (may be negative) for a tensor of `rank`.
absl::StatusOr<int> NormaliseAxis(int64_t axis, int rank);

// Registers one of ops/'s own ops (OpRegistry::RegisterBuiltin): a refusal
// is kept in registry.builtin_ops_status(), never fatal.
void MustRegister(OpRegistry& registry, RegisteredOp op);
// Shorthand for the common case: a non-variadic op.
RegisteredOp MakeOp(std::string type, std::vector<std::string> inputs,
                    int num_outputs, std::vector<AttrSpec> attrs,
                    ShapeFn shape_fn, KernelFn kernel, GradFn gradient = {});
// The same for a kernel that reads its node's attributes once per plan:
// `bind` makes the kernel from a node's attributes (OpDef::bind). The op's
// plain kernel binds on every call, for callers without a plan.
using KernelBinder = std::function<KernelFn(const AttrMap&)>;
RegisteredOp MakeOp(std::string type, std::vector<std::string> inputs,
                    int num_outputs, std::vector<AttrSpec> attrs,
                    ShapeFn shape_fn, KernelBinder bind, GradFn gradient = {});
// The value of `out` when its node is a Const.
std::optional<Tensor> ConstValueOf(const Output& out);

// --- kernels ---

// Output `i` of the kernel's node: a fresh zero tensor (InvalidArgument
// naming the node when the shape is invalid, ResourceExhausted when memory
// is).
absl::StatusOr<Tensor> NewOutput(const OpKernelContext& ctx, DataType dtype,
                                 const TensorShape& shape);

// As NewOutput, but the elements are unspecified (Tensor::Uninitialized):
// only for kernels that write every element of the output.
absl::StatusOr<Tensor> NewUninitializedOutput(const OpKernelContext& ctx,
                                              DataType dtype,
                                              const TensorShape& shape);

// Broadcasts `t` (right-aligned) to `shape`, into a fresh tensor; fails as
// Tensor::Uninitialized does.
template <typename T>
absl::StatusOr<Tensor> BroadcastTo(const Tensor& t, const TensorShape& shape);

// A vector tensor of `values` as T (int32 or int64): shapes, axes,
// permutations. Fails only when memory is exhausted (ResourceExhausted).
template <typename T, typename V>
absl::StatusOr<Tensor> VectorTensor(absl::Span<const V> values) {
  std::vector<T> data(values.begin(), values.end());
  return Tensor::FromData<T>({static_cast<int64_t>(data.size())},
                             absl::MakeConstSpan(data));
}

// --- gradients ---

// "<name scope>/<forward node>_grad/<what>" (the scope is "gradients"
// unless AddGradients was given another), the name of a gradient node.
std::string GradName(const GradContext& ctx, absl::string_view what);
// The gradient of a binary op's input `x` (whose partner was `other`),
// summed back from the broadcast output shape to x's shape. Static when the
// shapes decide which axes were broadcast; otherwise built with
// Shape/BroadcastGradientArgs/Sum/Reshape.
absl::StatusOr<Output> UnbroadcastGrad(const GradContext& ctx,
                                       const Output& grad, const Output& x,
                                       const Output& other,
                                       absl::string_view what);
// A zero-valued gradient for `x` (ZerosLike).
absl::StatusOr<Output> ZerosGrad(const GradContext& ctx, const Output& x);

}  // namespace op_util
}  // namespace graphgc

// --- implementation of templates ---

namespace graphgc {
namespace op_util {

template <typename T>
absl::StatusOr<Tensor> BroadcastTo(const Tensor& t, const TensorShape& shape) {
  // Every element is written below.
  absl::StatusOr<Tensor> uninitialized =
      Tensor::Uninitialized(t.dtype(), shape);
  if (!uninitialized.ok()) return uninitialized.status();
  Tensor out = *std::move(uninitialized);
  const int r = shape.dims();
  const int tr = t.shape().dims();
  std::vector<int64_t> in_stride(r, 0);
  int64_t s = 1;
  for (int d = tr - 1; d >= 0; --d) {
    const int od = d + (r - tr);
    in_stride[od] = t.shape()[d] == 1 ? 0 : s;
    s *= t.shape()[d];
  }
  const T* src = t.data<T>().data();
  T* dst = out.mutable_data<T>().data();
  const int64_t n = out.num_elements();
  if (n == 0) return out;
  std::vector<int64_t> idx(r, 0);
  int64_t src_off = 0;
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = src[src_off];
    for (int d = r - 1; d >= 0; --d) {
      ++idx[d];
      src_off += in_stride[d];
      if (idx[d] < shape[d]) break;
      src_off -= in_stride[d] * idx[d];
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace op_util
}  // namespace graphgc

#endif  // GRAPHGC_OPS_OP_UTIL_H_
