#include "ops/parallel.h"

#include <algorithm>

#include "unsupported/Eigen/CXX11/Tensor"

namespace graphgc {
namespace op_util {
namespace {

// Multiply-adds per cycle a vectorised GEMM sustains on one core, counted
// as flops: half of two 8-lane FMA units, an estimate that errs towards
// not splitting.
constexpr double kGemmFlopsPerCycle = 16;

Eigen::TensorOpCost ToEigen(const UnitCost& cost) {
  return Eigen::TensorOpCost(cost.bytes_loaded, cost.bytes_stored, cost.cycles);
}

}  // namespace

double GemmCycles(double flops) { return flops / kGemmFlopsPerCycle; }

void ParallelFor(const OpKernelContext& ctx, int64_t n, const UnitCost& cost,
                 const std::function<void(int64_t, int64_t)>& f) {
  if (n <= 0) return;
  ctx.device().parallelFor(
      static_cast<Eigen::Index>(n), ToEigen(cost),
      [&f](Eigen::Index begin, Eigen::Index end) { f(begin, end); });
}

int ThreadsFor(const OpKernelContext& ctx, int64_t n, const UnitCost& cost) {
  const int threads = ctx.device().numThreads();
  if (n <= 1 || threads <= 1) return 1;
  const int wanted =
      Eigen::TensorCostModel<Eigen::ThreadPoolDevice>::numThreads(
          static_cast<double>(n), ToEigen(cost), threads);
  return static_cast<int>(std::min<int64_t>(n, wanted));
}

void ParallelMatMul(const OpKernelContext& ctx, const float* a, const float* b,
                    float* c, int64_t m, int64_t n, int64_t k, bool transpose_a,
                    bool transpose_b, const gemm::Epilogue& epilogue) {
  if (ctx.device().numThreads() <= 1 ||
      gemm::UseSmallMatMul(m, n, k, transpose_a, transpose_b)) {
    gemm::MatMulWithEpilogue(a, b, c, m, n, k, transpose_a, transpose_b,
                             epilogue);
    return;
  }
  // A row of C: a row of op(A) read, n values written, n x k multiply-adds.
  const UnitCost row{.bytes_loaded = 4.0 * static_cast<double>(k),
                     .bytes_stored = 4.0 * static_cast<double>(n),
                     .cycles = GemmCycles(2.0 * static_cast<double>(n) *
                                          static_cast<double>(k))};
  ParallelFor(ctx, m, row, [&](int64_t r0, int64_t r1) {
    gemm::EigenMatMulRowsWithEpilogue(a, b, c, m, n, k, transpose_a,
                                      transpose_b, r0, r1, epilogue);
  });
}

}  // namespace op_util
}  // namespace graphgc
