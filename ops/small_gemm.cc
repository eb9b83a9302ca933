// ops/small_gemm.cc
//
// SmallMatMul: C is cut into blocks of kRows rows by kCols packets; each
// block's accumulators stay in registers over the whole inner dimension:
// per step p, load kCols packets of B's row p, broadcast A(i, p) for each of
// the block's rows, and fused-multiply-add. A is read in place (a broadcast
// costs the same from a row or a column), so transpose_a is free. B's rows
// must be contiguous packets: with transpose_b, B is first copied
// transposed into a scratch on the stack. When n is not a multiple of the
// packet size, the last packet ends at n and overlaps its neighbour; only
// n < one packet pads B and stores only the first n lanes of C's rows
// (masked stores where the instruction set has them). With few columns and
// enough rows, C^T = B^T A^T may be computed instead (PreferTransposed),
// reading A in place with transpose_a and from a transposed copy without:
// a 32 x 10 x 64 product (an MLP's output layer) then fills every lane of
// a 16-float AVX-512 packet instead of padding 10 columns to 16.
#include "ops/small_gemm.h"

#include <algorithm>
#include <cstring>

#include "Eigen/Core"

namespace graphgc {
namespace gemm {
namespace {

using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int kPacket = Eigen::internal::packet_traits<float>::size;
// A kPacket x kPacket tile for ptranspose. Packet is a vector type (__m256
// with AVX) whose alignment attribute g++ says a template argument drops;
// PacketBlock only holds an array of them, as in Eigen's own kernels.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
using Tile = Eigen::internal::PacketBlock<Packet, kPacket>;
#pragma GCC diagnostic pop

// The register block: kRows x kCols packets of accumulators (12 of the 16
// AVX registers). Measured on the five MLP shapes against 4x2, 3x4, 4x3
// and 8x1: 6x2 was fastest in total, and no shape lost much with it.
constexpr int kRows = 6;
constexpr int kCols = 2;

// The largest m * n * k that takes the small path. It won over Eigen at
// every size measured up to 256^3 (NN and TN; 1.4-1.7x from 96^3 up), but
// it does no cache blocking, so it stops where A and B (128x128 floats,
// 64 KB each) still sit in L2 with room to spare; Eigen's blocked GEMM
// takes anything larger.
constexpr int64_t kSmallMaxMultiplyAdds = 128 * 128 * 128;

// Floats of the stack scratch that holds a transposed or padded B.
constexpr int64_t kScratchFloats = 8192;

struct Operands {
  const float* a;
  int64_t a_row_stride;  // A(i, p) = a[i * a_row_stride + p * a_col_stride]
  int64_t a_col_stride;
  const float* b;  // B(p, j) = b[p * ldb + j], ldb a multiple of kPacket
  int64_t ldb;
  float* c;  // C(i, j) = c[i * ldc + j]
  int64_t ldc;
  int64_t k;
  // The epilogue (Epilogue) as this product's C sees it: a bias per
  // column (C(i, j) + col_bias[j]), per row (C(i, j) + row_bias[i], for
  // C^T = B^T A^T), or none, then the ReLU.
  const float* col_bias = nullptr;
  const float* row_bias = nullptr;
  bool relu = false;
};

// The first n (< kPacket) floats at `from` in a packet's first lanes, the
// other lanes 0, reading nothing past from + n (a masked load where the
// instruction set has one).
inline Packet LoadFirst(const float* from, int n) {
#if defined(EIGEN_VECTORIZE_AVX512)
  return Eigen::internal::ploadu<Packet>(from,
                                         static_cast<uint16_t>((1u << n) - 1));
#else
  alignas(64) float lanes[kPacket] = {};
  std::memcpy(lanes, from, n * sizeof(float));
  return Eigen::internal::pload<Packet>(lanes);
#endif
}

// Stores a packet's first n (< kPacket) lanes at `to`, writing nothing past
// to + n.
inline void StoreFirst(float* to, const Packet& p, int n) {
#if defined(EIGEN_VECTORIZE_AVX512)
  Eigen::internal::pstoreu(to, p, static_cast<uint16_t>((1u << n) - 1));
#else
  alignas(64) float lanes[kPacket];
  Eigen::internal::pstore(lanes, p);
  std::memcpy(to, lanes, n * sizeof(float));
#endif
}

// C[i0 : i0+R, columns] = A[i0 : i0+R, :] * B[:, columns] for C packets of
// columns: packet c starts at column j0 + c * kPacket, except the last one,
// which starts at j_last (<= j0 + (C - 1) * kPacket: it may overlap its
// neighbour, whose shared columns it recomputes identically). With
// `partial` < kPacket, only that many lanes of the last packet are stored.
template <int R, int C>
inline void Block(const Operands& o, int64_t i0, int64_t j0, int64_t j_last,
                  int partial) {
  using Eigen::internal::pmadd;
  using Eigen::internal::pset1;
  Packet acc[R][C];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) acc[r][c] = pset1<Packet>(0.f);
  }
  const float* a = o.a + i0 * o.a_row_stride;
  const float* b = o.b + j0;
  const int64_t last_offset = j_last - j0;
  for (int64_t p = 0; p < o.k; ++p) {
    Packet bp[C];
#pragma GCC unroll 16
    for (int c = 0; c + 1 < C; ++c) {
      bp[c] = Eigen::internal::ploadu<Packet>(b + c * kPacket);
    }
    bp[C - 1] = Eigen::internal::ploadu<Packet>(b + last_offset);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const Packet ap = pset1<Packet>(a[r * o.a_row_stride]);
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c) acc[r][c] = pmadd(ap, bp[c], acc[r][c]);
    }
    a += o.a_col_stride;
    b += o.ldb;
  }
  // The epilogue on the complete sums, as a second pass would apply it:
  // the bias added to each value, then max(v, 0).
  if (o.col_bias != nullptr || o.row_bias != nullptr || o.relu) {
    Packet bias[C];
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) bias[c] = pset1<Packet>(0.f);
    if (o.col_bias != nullptr) {
      const float* cb = o.col_bias + j0;
#pragma GCC unroll 16
      for (int c = 0; c + 1 < C; ++c) {
        bias[c] = Eigen::internal::ploadu<Packet>(cb + c * kPacket);
      }
      bias[C - 1] = partial == kPacket
                        ? Eigen::internal::ploadu<Packet>(cb + last_offset)
                        : LoadFirst(cb + last_offset, partial);
    }
    const Packet zero = pset1<Packet>(0.f);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c) {
        if (o.col_bias != nullptr) {
          acc[r][c] = Eigen::internal::padd(acc[r][c], bias[c]);
        }
        if (o.row_bias != nullptr) {
          acc[r][c] = Eigen::internal::padd(acc[r][c],
                                            pset1<Packet>(o.row_bias[i0 + r]));
        }
        if (o.relu) acc[r][c] = Eigen::internal::pmax(acc[r][c], zero);
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    float* out = o.c + (i0 + r) * o.ldc + j0;
#pragma GCC unroll 16
    for (int c = 0; c + 1 < C; ++c) {
      Eigen::internal::pstoreu(out + c * kPacket, acc[r][c]);
    }
    if (partial == kPacket) {
      Eigen::internal::pstoreu(out + last_offset, acc[r][C - 1]);
    } else {
      StoreFirst(out + last_offset, acc[r][C - 1], partial);
    }
  }
}

// The epilogue as a pass over the m x n matrix c, for the products the
// register blocks do not compute (Eigen's GEMM, k == 0): whole packets
// along each row, then the row's tail one value at a time.
void ApplyEpilogue(const Epilogue& e, float* c, int64_t m, int64_t n) {
  if (e.bias == nullptr && !e.relu) return;
  namespace ei = Eigen::internal;
  const Packet zero = ei::pset1<Packet>(0.f);
  const int64_t whole = n - n % kPacket;
  for (int64_t r = 0; r < m; ++r) {
    float* row = c + r * n;
    for (int64_t j = 0; j < whole; j += kPacket) {
      Packet v = ei::ploadu<Packet>(row + j);
      if (e.bias != nullptr) v = ei::padd(v, ei::ploadu<Packet>(e.bias + j));
      if (e.relu) v = ei::pmax(v, zero);
      ei::pstoreu(row + j, v);
    }
    for (int64_t j = whole; j < n; ++j) {
      float v = row[j];
      if (e.bias != nullptr) v = v + e.bias[j];
      if (e.relu) v = std::max(v, 0.f);
      row[j] = v;
    }
  }
}

// Fewer than kRows rows left: one block of exactly `rows` rows.
template <int R, int C>
void TailRows(const Operands& o, int64_t rows, int64_t i0, int64_t j0,
              int64_t j_last, int partial) {
  if constexpr (R > 0) {
    if (rows == R) {
      Block<R, C>(o, i0, j0, j_last, partial);
    } else {
      TailRows<R - 1, C>(o, rows, i0, j0, j_last, partial);
    }
  }
}

// All rows of C for the C packets from column j0.
template <int C>
void Columns(const Operands& o, int64_t m, int64_t j0, int64_t j_last,
             int partial) {
  int64_t i0 = 0;
  for (; i0 + kRows <= m; i0 += kRows) {
    Block<kRows, C>(o, i0, j0, j_last, partial);
  }
  if (i0 < m) TailRows<kRows - 1, C>(o, m - i0, i0, j0, j_last, partial);
}

// Fewer than kCols packets left: exactly `packets` of them.
template <int C>
void TailColumns(const Operands& o, int64_t m, int64_t packets, int64_t j0,
                 int64_t j_last, int partial) {
  if constexpr (C > 0) {
    if (packets == C) {
      Columns<C>(o, m, j0, j_last, partial);
    } else {
      TailColumns<C - 1>(o, m, packets, j0, j_last, partial);
    }
  }
}

// C = A B for the m x n matrix C of `o`; o.b's rows hold max(n, kPacket)
// readable floats (zero padding past n when n < kPacket).
void Multiply(const Operands& o, int64_t m, int64_t n) {
  const int64_t packets = (n + kPacket - 1) / kPacket;
  const int64_t j_end = std::max<int64_t>(n, kPacket) - kPacket;
  const int partial = static_cast<int>(std::min<int64_t>(n, kPacket));
  int64_t jp = 0;
  for (; jp + kCols <= packets; jp += kCols) {
    const int64_t j0 = jp * kPacket;
    Columns<kCols>(o, m, j0, std::min(j0 + (kCols - 1) * kPacket, j_end),
                   partial);
  }
  if (jp < packets) {
    const int64_t j0 = jp * kPacket;
    TailColumns<kCols - 1>(o, m, packets - jp, j0,
                           std::min(j0 + (packets - jp - 1) * kPacket, j_end),
                           partial);
  }
}

// Whether to compute C^T = B^T A^T (vectorised over C's rows, then
// transposed into C) rather than C = A B (vectorised over C's columns).
// A^T must have contiguous rows: A as stored with transpose_a, else (for
// n below a packet) a transposed copy of A, which must fit in the scratch
// after C^T. Costs in packet multiply-adds, padded lanes included, plus a
// guess for the transposes (of C and of A here, of B there).
bool PreferTransposed(int64_t m, int64_t n, int64_t k, bool transpose_a,
                      bool transpose_b) {
  if (m < kPacket || m * n > kScratchFloats) return false;
  // Without transpose_a only for fewer columns than a packet, where the
  // direct product would pad B's rows.
  if (!transpose_a && (n >= kPacket || m * (n + k) > kScratchFloats)) {
    return false;
  }
  auto packets = [](int64_t x) { return (x + kPacket - 1) / kPacket; };
  const int64_t direct =
      m * packets(n) * k + (transpose_b ? n * k / kPacket : 0);
  const int64_t transposed = n * packets(m) * k + m * n / kPacket +
                             (transpose_a ? 0 : m * k / kPacket);
  return transposed < direct;
}

// Transposes a tile in registers. A 16 x 16 tile of AVX-512 packets takes
// four rounds of 16 shuffles: pairs of rows interleaved (unpacklo/hi), then
// pairs of pairs (shuffle_ps), then 128-bit quarters twice (shuffle_f32x4).
// Eigen's ptranspose for that packet goes through 256-bit halves (about
// 110 shuffles, extracts and inserts); bench/matmul_bench's transpose rows
// compare the two. A training step of the 10-64-10 MLP transposes 18
// tiles. Other packets take Eigen's.
inline void TransposeInRegisters(Tile& tile) {
#if defined(EIGEN_VECTORIZE_AVX512)
  if constexpr (kPacket == 16) {
    __m512* r = tile.packet;
    __m512 t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 2) {
      t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    // Rows 4q..4q+3's columns j (mod 4) in each quarter: r[4q + j].
#pragma GCC unroll 16
    for (int q = 0; q < 16; q += 4) {
      r[q] = _mm512_shuffle_ps(t[q], t[q + 2], _MM_SHUFFLE(1, 0, 1, 0));
      r[q + 1] = _mm512_shuffle_ps(t[q], t[q + 2], _MM_SHUFFLE(3, 2, 3, 2));
      r[q + 2] = _mm512_shuffle_ps(t[q + 1], t[q + 3], _MM_SHUFFLE(1, 0, 1, 0));
      r[q + 3] = _mm512_shuffle_ps(t[q + 1], t[q + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    // Quarters 0 and 2 (0x88) or 1 and 3 (0xdd) of a pair of row groups.
#pragma GCC unroll 16
    for (int j = 0; j < 4; ++j) {
      t[j] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0x88);
      t[j + 4] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0xdd);
      t[j + 8] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0x88);
      t[j + 12] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0xdd);
    }
#pragma GCC unroll 16
    for (int j = 0; j < 8; ++j) {
      r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
      r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
    }
    return;
  }
#endif
  Eigen::internal::ptranspose(tile);
}

// dst = src^T for one rows x cols tile (both at most kPacket; exactly
// kPacket when kFull), transposed in registers: the tile's rows are loaded
// as packets (the missing ones 0, the missing lanes 0 and unread), and
// each of its cols columns stored as rows lanes.
template <bool kFull>
inline void TransposeTile(const float* src, int rows, int cols, int64_t lds,
                          float* dst, int64_t ldd) {
  using Eigen::internal::ploadu;
  using Eigen::internal::pstoreu;
  Tile tile;
#pragma GCC unroll 16
  for (int r = 0; r < kPacket; ++r) {
    if (kFull) {
      tile.packet[r] = ploadu<Packet>(src + r * lds);
    } else if (r >= rows) {
      tile.packet[r] = Eigen::internal::pset1<Packet>(0.f);
    } else if (cols == kPacket) {
      tile.packet[r] = ploadu<Packet>(src + r * lds);
    } else {
      tile.packet[r] = LoadFirst(src + r * lds, cols);
    }
  }
  TransposeInRegisters(tile);
#pragma GCC unroll 16
  for (int c = 0; c < kPacket; ++c) {
    if (kFull) {
      pstoreu(dst + c * ldd, tile.packet[c]);
    } else if (c < cols) {
      if (rows == kPacket) {
        pstoreu(dst + c * ldd, tile.packet[c]);
      } else {
        StoreFirst(dst + c * ldd, tile.packet[c], rows);
      }
    }
  }
}

}  // namespace

bool SmallMatMulFits(int64_t m, int64_t n, int64_t k, bool transpose_a,
                     bool transpose_b) {
  if (PreferTransposed(m, n, k, transpose_a, transpose_b)) return true;
  return (!transpose_b && n >= kPacket) ||
         k * std::max<int64_t>(n, kPacket) <= kScratchFloats;
}

bool UseSmallMatMul(int64_t m, int64_t n, int64_t k, bool transpose_a,
                    bool transpose_b) {
  // A vector (m or n of 1) is Eigen's GEMV, faster than a block of one
  // useful lane or row. Fewer than kPacket columns would mean padded,
  // mostly wasted lanes (at 4x4x4 Eigen is faster) unless the
  // transposed product vectorises over the rows instead.
  if (m <= 1 || n <= 1) return false;
  if (m * n * k > kSmallMaxMultiplyAdds) return false;
  if (PreferTransposed(m, n, k, transpose_a, transpose_b)) return true;
  return n >= kPacket && SmallMatMulFits(m, n, k, transpose_a, transpose_b);
}

namespace {

void SmallMatMulThen(const float* a, const float* b, float* c, int64_t m,
                     int64_t n, int64_t k, bool transpose_a, bool transpose_b,
                     const Epilogue& epilogue) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, 0.f);
    ApplyEpilogue(epilogue, c, m, n);
    return;
  }
  if (!SmallMatMulFits(m, n, k, transpose_a, transpose_b)) {
    EigenMatMul(a, b, c, m, n, k, transpose_a, transpose_b);
    ApplyEpilogue(epilogue, c, m, n);
    return;
  }
  alignas(64) float scratch[kScratchFloats];
  Operands o;
  o.k = k;
  o.relu = epilogue.relu;
  if (PreferTransposed(m, n, k, transpose_a, transpose_b)) {
    // C^T (n x m) = B^T A^T into the scratch: A^T is A as stored with
    // transpose_a, else copied transposed after C^T; B^T is read in place
    // like any left operand.
    const float* a_t = a;
    if (!transpose_a) {
      float* copy = scratch + n * m;
      Transpose(a, m, k, k, copy, m);
      a_t = copy;
    }
    o.a = b;
    o.a_row_stride = transpose_b ? k : 1;
    o.a_col_stride = transpose_b ? 1 : n;
    o.b = a_t;
    o.ldb = m;
    o.c = scratch;
    o.ldc = m;
    o.row_bias = epilogue.bias;  // C^T's rows are C's columns
    Multiply(o, n, m);
    Transpose(scratch, n, m, m, c, n);
    return;
  }
  o.a = a;
  o.a_row_stride = transpose_a ? 1 : k;
  o.a_col_stride = transpose_a ? m : 1;
  o.c = c;
  o.ldc = n;
  o.col_bias = epilogue.bias;
  // B's rows must be contiguous: with transpose_b, B is copied transposed;
  // with n < kPacket, into rows padded to one packet (only C's first n
  // lanes are then stored). Otherwise a last packet that would run past n
  // instead ends at n, overlapping its neighbour.
  const int64_t ldb = std::max<int64_t>(n, kPacket);
  o.ldb = ldb;
  if (!transpose_b && n >= kPacket) {
    o.b = b;
  } else {
    if (transpose_b) {
      Transpose(b, n, k, k, scratch, ldb);
    } else {
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t j = 0; j < n; ++j) scratch[p * ldb + j] = b[p * n + j];
      }
    }
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = n; j < ldb; ++j) scratch[p * ldb + j] = 0.f;
    }
    o.b = scratch;
  }
  Multiply(o, m, n);
}

}  // namespace

void SmallMatMul(const float* a, const float* b, float* c, int64_t m, int64_t n,
                 int64_t k, bool transpose_a, bool transpose_b) {
  SmallMatMulThen(a, b, c, m, n, k, transpose_a, transpose_b, Epilogue{});
}

void Transpose(const float* src, int64_t rows, int64_t cols, int64_t lds,
               float* dst, int64_t ldd) {
  const int64_t rows_tiled = rows / kPacket * kPacket;
  const int64_t cols_tiled = cols / kPacket * kPacket;
  const int rows_left = static_cast<int>(rows - rows_tiled);
  const int cols_left = static_cast<int>(cols - cols_tiled);
  for (int64_t i = 0; i < rows_tiled; i += kPacket) {
    for (int64_t j = 0; j < cols_tiled; j += kPacket) {
      TransposeTile<true>(src + i * lds + j, kPacket, kPacket, lds,
                          dst + j * ldd + i, ldd);
    }
    if (cols_left > 0) {
      TransposeTile<false>(src + i * lds + cols_tiled, kPacket, cols_left, lds,
                           dst + cols_tiled * ldd + i, ldd);
    }
  }
  if (rows_left > 0) {
    for (int64_t j = 0; j < cols; j += kPacket) {
      TransposeTile<false>(
          src + rows_tiled * lds + j, rows_left,
          static_cast<int>(std::min<int64_t>(kPacket, cols - j)), lds,
          dst + j * ldd + rows_tiled, ldd);
    }
  }
}

void EigenMatMul(const float* a, const float* b, float* c, int64_t m, int64_t n,
                 int64_t k, bool transpose_a, bool transpose_b) {
  EigenMatMulRows(a, b, c, m, n, k, transpose_a, transpose_b, 0, m);
}

void EigenMatMulRows(const float* a, const float* b, float* c, int64_t m,
                     int64_t n, int64_t k, bool transpose_a, bool transpose_b,
                     int64_t r0, int64_t r1) {
  using RowMajor =
      Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const RowMajor>;
  using Strided = Eigen::Map<const RowMajor, 0, Eigen::OuterStride<>>;
  const int64_t rows = r1 - r0;
  Eigen::Map<RowMajor> cm(c + r0 * n, rows, n);
  if (rows <= 0 || n == 0) return;
  if (k == 0) {  // A may be empty (no pointer to offset)
    cm.setZero();
    return;
  }
  // op(A)'s rows [r0, r1): rows of A, or columns of A (k x m) when it is
  // transposed.
  const Strided am =
      transpose_a ? Strided(a + r0, k, rows, Eigen::OuterStride<>(m))
                  : Strided(a + r0 * k, rows, k, Eigen::OuterStride<>(k));
  const ConstMap bm(b, transpose_b ? n : k, transpose_b ? k : n);
  if (!transpose_a && !transpose_b) {
    cm.noalias() = am * bm;
  } else if (!transpose_a && transpose_b) {
    cm.noalias() = am * bm.transpose();
  } else if (transpose_a && !transpose_b) {
    cm.noalias() = am.transpose() * bm;
  } else {
    cm.noalias() = am.transpose() * bm.transpose();
  }
}

void EigenMatMulRowsWithEpilogue(const float* a, const float* b, float* c,
                                 int64_t m, int64_t n, int64_t k,
                                 bool transpose_a, bool transpose_b, int64_t r0,
                                 int64_t r1, const Epilogue& epilogue) {
  EigenMatMulRows(a, b, c, m, n, k, transpose_a, transpose_b, r0, r1);
  if (r1 > r0) ApplyEpilogue(epilogue, c + r0 * n, r1 - r0, n);
}

void MatMulWithEpilogue(const float* a, const float* b, float* c, int64_t m,
                        int64_t n, int64_t k, bool transpose_a,
                        bool transpose_b, const Epilogue& epilogue) {
  if (UseSmallMatMul(m, n, k, transpose_a, transpose_b)) {
    SmallMatMulThen(a, b, c, m, n, k, transpose_a, transpose_b, epilogue);
  } else {
    EigenMatMul(a, b, c, m, n, k, transpose_a, transpose_b);
    ApplyEpilogue(epilogue, c, m, n);
  }
}

void MatMul(const float* a, const float* b, float* c, int64_t m, int64_t n,
            int64_t k, bool transpose_a, bool transpose_b) {
  if (UseSmallMatMul(m, n, k, transpose_a, transpose_b)) {
    SmallMatMul(a, b, c, m, n, k, transpose_a, transpose_b);
  } else {
    EigenMatMul(a, b, c, m, n, k, transpose_a, transpose_b);
  }
}

}  // namespace gemm
}  // namespace graphgc
