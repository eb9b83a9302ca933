// ops/array_ops.h
//
// Registration of graphgc's array ops (kernels, shape functions, gradients);
// RegisterCoreOps calls it once when the global registry is built. Private
// to //ops: users build these ops through ops/ops.h.
//
// Thread safety: call only while the registry is being built.
#ifndef GRAPHGC_OPS_ARRAY_OPS_H_
#define GRAPHGC_OPS_ARRAY_OPS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ops/registry.h"
#include "runtime/tensor.h"

namespace graphgc {

void RegisterArrayOps(OpRegistry& registry);

// The shape a Reshape to `target` gives a tensor of `n` elements (n < 0:
// unknown): its one -1 resolved, as the Reshape kernel (`at_runtime`,
// where a second -1 is an error too) and its shape function resolve it.
// InvalidArgument in the kernel's words ("cannot reshape 6 elements to
// [4,-1]"); a target whose known dimensions hold more than
// kMaxTensorElements elements (or whose product wraps int64) is "too many
// elements". The fused kernels reuse it to fail as Reshape fails.
absl::StatusOr<TensorShape> ResolveReshape(const TensorShape& target, int64_t n,
                                           bool at_runtime);

}  // namespace graphgc

#endif  // GRAPHGC_OPS_ARRAY_OPS_H_
