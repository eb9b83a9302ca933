// ops/parallel.h
//
// How a kernel shares its work with the intra-op threads of its device
// (OpKernelContext::device(), runtime/executor.h): by a cost estimate, so
// that an op whose work is small runs on the calling thread alone and only
// one large enough to pay for waking other threads is split. The decision
// is Eigen's cost model (TensorCostModel: about 100k cycles for each thread
// beyond the first), the split Eigen's parallelFor (the calling thread
// takes part). Private to //ops.
//
// Thread safety: the functions may be called from any kernel; `f` runs on
// several threads at once for disjoint ranges.
//
// Example:
//   ParallelFor(ctx, rows, {.bytes_loaded = 4.0 * k, .cycles = GemmCycles(2.0 *
//   k)},
//               [&](int64_t r0, int64_t r1) { ... rows [r0, r1) ... });
#ifndef GRAPHGC_OPS_PARALLEL_H_
#define GRAPHGC_OPS_PARALLEL_H_

#include <cstdint>
#include <functional>

#include "ops/small_gemm.h"
#include "runtime/op_def.h"

namespace graphgc {
namespace op_util {

// The estimated cost of one unit of a loop.
struct UnitCost {
  double bytes_loaded = 0;
  double bytes_stored = 0;
  double cycles = 0;  // compute, besides the memory traffic
};

// The cycles of `flops` floating-point operations of a GEMM-like loop
// (a multiply-add counts 2) on one vectorised core.
double GemmCycles(double flops);

// Calls f(begin, end) for disjoint ranges covering [0, n): once, on the
// calling thread, when n units of `cost` are too little work to share, or
// when the device has one thread; otherwise for blocks spread over the
// device's threads, returning when all are done.
void ParallelFor(const OpKernelContext& ctx, int64_t n, const UnitCost& cost,
                 const std::function<void(int64_t, int64_t)>& f);

// How many threads ParallelFor would use for n units of `cost` (1 to the
// device's thread count, at most n): for a reduction split into that many fixed
// shards, whose sums then depend only on the thread count, not on scheduling.
int ThreadsFor(const OpKernelContext& ctx, int64_t n, const UnitCost& cost);

// gemm::MatMulWithEpilogue (ops/small_gemm.h) into `c`, its rows shared
// across the device's threads when the product is large enough: on one
// thread, or for a product the small path takes, bit for bit what
// MatMulWithEpilogue computes.
void ParallelMatMul(const OpKernelContext& ctx, const float* a, const float* b,
                    float* c, int64_t m, int64_t n, int64_t k, bool transpose_a,
                    bool transpose_b, const gemm::Epilogue& epilogue = {});

}  // namespace op_util
}  // namespace graphgc

#endif  // GRAPHGC_OPS_PARALLEL_H_
