// ops/concat_ops.h
//
// ConcatV2, Slice and Pad, with TensorFlow's OpDefs: their registration
// (RegisterConcatOps, called by RegisterCoreOps) and their builders.
// ConcatV2 joins N >= 2 tensors of one rank along `axis` (negative counts
// from the end); its gradient slices the upstream gradient back into one
// piece per input. Slice takes `size[i]` elements from `begin[i]` along
// each axis (-1: to the end); its gradient pads the upstream gradient back
// (constant begin and size). Pad adds zeros before and after each axis; its
// gradient slices them off (constant paddings).
//
// Thread safety: RegisterConcatOps only while the registry is being built;
// the builders as the graph's own building methods.
//
// Example:
//   GG_ASSIGN_OR_RETURN(Output y, ops::ConcatV2({a, b}, /*axis=*/1));
//   GG_ASSIGN_OR_RETURN(Output b2, ops::Slice(y, {0, 3}, {-1, 4}));
#ifndef GRAPHGC_OPS_CONCAT_OPS_H_
#define GRAPHGC_OPS_CONCAT_OPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ops/ops.h"
#include "ops/registry.h"
#include "runtime/graph.h"

namespace graphgc {

void RegisterConcatOps(OpRegistry& registry);

namespace ops {

// ConcatV2(values..., axis) with `axis` a constant int32 input. Errors name
// the node: "ConcatV2 'c': ConcatOp : Dimension 0 in both shapes must be
// equal: shape[0] = [2,3] vs. shape[1] = [4,3]".
absl::StatusOr<Output> ConcatV2(absl::Span<const Output> values, int64_t axis,
                                OpOptions options = {});
// Slice(x, begin, size) with `begin` and `size` constant int32 inputs (int64
// when a value does not fit).
absl::StatusOr<Output> Slice(const Output& x, std::vector<int64_t> begin,
                             std::vector<int64_t> size, OpOptions options = {});
// Pad(x, paddings) with `paddings` a constant [rank, 2] int32 input (int64
// when a value does not fit): (before, after) zeros per axis, flattened.
absl::StatusOr<Output> Pad(const Output& x, std::vector<int64_t> paddings,
                           OpOptions options = {});

}  // namespace ops
}  // namespace graphgc

#endif  // GRAPHGC_OPS_CONCAT_OPS_H_
