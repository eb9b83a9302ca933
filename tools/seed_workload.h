// The seed program's workload (../shared/API.md), shared by the
// consecutive_models tool and the benchmarks that time it: its random data
// and its ModelFn (Input 10, Dense 64 relu, Dense 10 softmax, Adam, sparse
// categorical cross-entropy).
#ifndef GRAPHGC_TOOLS_SEED_WORKLOAD_H_
#define GRAPHGC_TOOLS_SEED_WORKLOAD_H_

#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "models/layers.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc::seed {

// x [samples, 10] uniform in [0, 1) and y [samples] labels in [0, 10), from
// std::mt19937(0) exactly as the seed program draws them. InvalidArgument
// for a negative `samples`; ResourceExhausted when memory is.
absl::StatusOr<std::pair<Tensor, Tensor>> Data(int samples = 1000);

// The seed's ModelFn on `graph`, compiled; `shared` replaces the hidden
// Dense(64, relu) layer when given. `intra_op_threads` as
// SequentialOptions's (0: the process's count, as the seed program gets).
absl::StatusOr<Sequential> Model(Graph& graph, int intra_op_threads = 0,
                                 const std::optional<Layer>& shared = {});

}  // namespace graphgc::seed

#endif  // GRAPHGC_TOOLS_SEED_WORKLOAD_H_
