// ops/small_gemm.h
//
// Single-precision matrix products for the MatMul kernel: C = op(A) op(B),
// with op a transpose or not. Eigen's blocked GEMM packs both operands
// before it multiplies, which costs more than the product itself when the
// matrices are small (a 32x64x10 product is ~20K multiply-adds). For small
// shapes SmallMatMul instead keeps a block of C in registers over the whole
// inner dimension (Eigen packet primitives, so AVX/FMA or SSE as compiled),
// reading A in place and B in place or from a small transposed/padded copy.
//
// All matrices are dense and row-major:
//   C is m x n; A is m x k (k x m if transpose_a); B is k x n (n x k if
//   transpose_b). C must not alias A or B.
//
// Example:
//   gemm::MatMul(a, b, c, /*m=*/32, /*n=*/64, /*k=*/10,
//                /*transpose_a=*/false, /*transpose_b=*/false);
//
// Thread safety: all functions are reentrant (scratch lives on the stack).
#ifndef GRAPHGC_OPS_SMALL_GEMM_H_
#define GRAPHGC_OPS_SMALL_GEMM_H_

#include <cstdint>

namespace graphgc {
namespace gemm {

// MatMul computes C = op(A) op(B), choosing SmallMatMul when
// UseSmallMatMul and Eigen's GEMM otherwise. Any of m, n, k may be
// 0 (k == 0 gives C = 0).
void MatMul(const float* a, const float* b, float* c, int64_t m, int64_t n,
            int64_t k, bool transpose_a, bool transpose_b);

// UseSmallMatMul is whether MatMul takes the small-matrix path for an
// m x n x k product: measured to be at least as fast as Eigen's there.
bool UseSmallMatMul(int64_t m, int64_t n, int64_t k, bool transpose_a,
                    bool transpose_b);

// SmallMatMul is the register-blocked path. Correct for any shape whose B
// copy fits its scratch (SmallMatMulFits); exposed for tests and benchmarks.
bool SmallMatMulFits(int64_t m, int64_t n, int64_t k, bool transpose_a,
                     bool transpose_b);
void SmallMatMul(const float* a, const float* b, float* c, int64_t m, int64_t n,
                 int64_t k, bool transpose_a, bool transpose_b);

// Transpose writes dst = src^T: src is rows x cols with row stride lds,
// dst cols x rows with row stride ldd (both row-major, not aliasing).
// Packet-sized tiles are transposed in registers, the edges too (as
// partial tiles: masked loads and stores where the instruction set has
// them), so a 10 x 64 matrix costs four tile transposes, not 640 moves.
void Transpose(const float* src, int64_t rows, int64_t cols, int64_t lds,
               float* dst, int64_t ldd);

// What MatMulWithEpilogue does to each value of C once its sum is complete:
// C(i, j) += bias[j] when bias is set (n values), then C(i, j) =
// max(C(i, j), 0) when relu. The bias belongs to the caller and is only
// read.
struct Epilogue {
  const float* bias = nullptr;
  bool relu = false;
};

// MatMulWithEpilogue is MatMul followed by `epilogue` on every value of C,
// bit for bit (the same sums, then the same addition and max), but on the
// small path each block of C gets it while the block is still in registers
// rather than in a second pass over C.
void MatMulWithEpilogue(const float* a, const float* b, float* c, int64_t m,
                        int64_t n, int64_t k, bool transpose_a,
                        bool transpose_b, const Epilogue& epilogue);

// EigenMatMul is Eigen's GEMM (`c.noalias() = a * b` on row-major maps).
void EigenMatMul(const float* a, const float* b, float* c, int64_t m, int64_t n,
                 int64_t k, bool transpose_a, bool transpose_b);

// EigenMatMulRows writes rows [r0, r1) of EigenMatMul's C (and nothing
// else), so that threads may share a large product by rows;
// EigenMatMulRowsWithEpilogue applies `epilogue` to those rows after.
void EigenMatMulRows(const float* a, const float* b, float* c, int64_t m,
                     int64_t n, int64_t k, bool transpose_a, bool transpose_b,
                     int64_t r0, int64_t r1);
void EigenMatMulRowsWithEpilogue(const float* a, const float* b, float* c,
                                 int64_t m, int64_t n, int64_t k,
                                 bool transpose_a, bool transpose_b, int64_t r0,
                                 int64_t r1, const Epilogue& epilogue);

}  // namespace gemm
}  // namespace graphgc

#endif  // GRAPHGC_OPS_SMALL_GEMM_H_
