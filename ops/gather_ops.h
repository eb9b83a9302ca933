// ops/gather_ops.h
//
// GatherV2 and UnsortedSegmentSum, with TensorFlow's OpDefs: their
// registration (RegisterGatherOps, called by RegisterCoreOps) and their
// builders. GatherV2 takes the slices of `params` along `axis` at
// `indices` (batch_dims 0 only); an index outside [0, params.shape[axis])
// is InvalidArgument at run time naming the node and the index, as
// TensorFlow's CPU kernel says it. Its gradient (axis 0) is the dense
// UnsortedSegmentSum of the upstream gradient by the indices, where
// TensorFlow builds IndexedSlices. UnsortedSegmentSum adds each row of
// `data` into row segment_ids[i] of a [num_segments, ...] result (a negative
// id drops its row, as TensorFlow does; one >= num_segments is
// InvalidArgument); its gradient gathers the upstream gradient back.
//
// Thread safety: RegisterGatherOps only while the registry is being built;
// the builders as the graph's own building methods.
//
// Example:
//   GG_ASSIGN_OR_RETURN(Output rows, ops::GatherV2(embeddings, ids, 0));
#ifndef GRAPHGC_OPS_GATHER_OPS_H_
#define GRAPHGC_OPS_GATHER_OPS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ops/ops.h"
#include "ops/registry.h"
#include "runtime/graph.h"

namespace graphgc {

void RegisterGatherOps(OpRegistry& registry);

namespace ops {

// GatherV2(params, indices, axis) with `axis` a constant int32 input and
// `indices` int32 or int64. Output shape: params.shape[:axis] +
// indices.shape + params.shape[axis + 1:].
absl::StatusOr<Output> GatherV2(const Output& params, const Output& indices,
                                int64_t axis, OpOptions options = {});
// UnsortedSegmentSum(data, segment_ids, num_segments) with `num_segments`
// a constant int32 input (int64 when it does not fit). segment_ids.shape
// must be a prefix of data.shape; output: [num_segments] +
// data.shape[segment_ids.rank:].
absl::StatusOr<Output> UnsortedSegmentSum(const Output& data,
                                          const Output& segment_ids,
                                          int64_t num_segments,
                                          OpOptions options = {});

}  // namespace ops
}  // namespace graphgc

#endif  // GRAPHGC_OPS_GATHER_OPS_H_
