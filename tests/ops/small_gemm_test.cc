#include "ops/small_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace graphgc {
namespace {

#ifdef GG_SMALL_GEMM_FOR_AVX512
// This file is also //tests/ops:small_gemm_avx512_test, linked with
// //ops:small_gemm_avx512 (the kernels built for AVX-512, as --config=bench
// builds them on such a CPU): it runs only where the CPU has AVX-512.
class RequiresAvx512 : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!__builtin_cpu_supports("avx512f") ||
        !__builtin_cpu_supports("avx512dq") ||
        !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl")) {
      GTEST_SKIP() << "this CPU has no AVX-512";
    }
  }
};
const ::testing::Environment* const kRequiresAvx512 =
    ::testing::AddGlobalTestEnvironment(new RequiresAvx512);
#endif

constexpr float kSentinel = 12345.f;

struct Product {
  int64_t m, n, k;
  bool ta, tb;
};

using MatMulFn = void (*)(const float*, const float*, float*, int64_t, int64_t,
                          int64_t, bool, bool);

// Runs `fn` on random operands of `p` and compares with a triple loop
// accumulating in double; C is followed by a sentinel that must survive.
void ExpectMatchesReference(MatMulFn fn, const Product& p, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> a(p.m * p.k), b(p.k * p.n);
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  std::vector<float> c(p.m * p.n + 1, kSentinel);
  fn(a.data(), b.data(), c.data(), p.m, p.n, p.k, p.ta, p.tb);
  const std::string where =
      ::testing::PrintToString(std::vector<int64_t>{p.m, p.n, p.k, p.ta, p.tb});
  ASSERT_EQ(c[p.m * p.n], kSentinel) << "wrote past C for " << where;
  int failures = 0;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < p.k; ++l) {
        const double x = p.ta ? a[l * p.m + i] : a[i * p.k + l];
        const double y = p.tb ? b[j * p.k + l] : b[l * p.n + j];
        s += x * y;
      }
      const float got = c[i * p.n + j];
      if (std::abs(got - s) > 1e-5 * (p.k + 1) && failures++ < 5) {
        ADD_FAILURE() << where << " C(" << i << ", " << j << ") = " << got
                      << ", reference " << s;
      }
    }
  }
}

// Every m, n, k in `sizes` (up to 64: all small) with all four transposes.
void SweepAllShapes(MatMulFn fn) {
  const std::vector<int64_t> sizes = {0,  1,  2,  3,  5,  7,  8,  9,
                                      10, 13, 16, 17, 31, 32, 33, 64};
  uint32_t seed = 1;
  for (int64_t m : sizes) {
    for (int64_t n : sizes) {
      for (int64_t k : {0, 1, 2, 7, 10, 32, 65}) {
        for (int t = 0; t < 4; ++t) {
          ExpectMatchesReference(fn, {m, n, k, (t & 1) != 0, (t & 2) != 0},
                                 seed++);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(SmallGemmTest, SmallMatMulMatchesReferenceForEveryShapeAndTranspose) {
  SweepAllShapes(gemm::SmallMatMul);
}

TEST(SmallGemmTest, MatMulMatchesReferenceForEveryShapeAndTranspose) {
  SweepAllShapes(gemm::MatMul);
}

TEST(SmallGemmTest, EigenMatMulMatchesReferenceForEveryShapeAndTranspose) {
  SweepAllShapes(gemm::EigenMatMul);
}

// The five products of a 10-64-10 MLP training step at batch 32.
const Product kMlpProducts[] = {
    {32, 64, 10, false, false}, {32, 10, 64, false, false},
    {64, 10, 32, true, false},  {32, 64, 10, false, true},
    {10, 64, 32, true, false},
};

TEST(SmallGemmTest, MlpProductsTakeTheSmallPath) {
  for (const Product& p : kMlpProducts) {
    EXPECT_TRUE(gemm::UseSmallMatMul(p.m, p.n, p.k, p.ta, p.tb))
        << p.m << "x" << p.n << "x" << p.k;
  }
}

TEST(SmallGemmTest, MlpProductsMatchReference) {
  for (const Product& p : kMlpProducts)
    ExpectMatchesReference(gemm::MatMul, p, 7);
}

TEST(SmallGemmTest, VectorProductsStayWithEigen) {
  EXPECT_FALSE(gemm::UseSmallMatMul(1, 64, 64, false, false));
  EXPECT_FALSE(gemm::UseSmallMatMul(64, 1, 64, false, false));
  EXPECT_FALSE(gemm::UseSmallMatMul(64, 1, 64, true, true));
}

// 256 x 64 x 128 = 128^3 multiply-adds is the largest small product.
TEST(SmallGemmTest, ThresholdSeparatesSmallFromEigen) {
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    EXPECT_TRUE(gemm::UseSmallMatMul(256, 64, 128, ta, tb)) << t;
    EXPECT_FALSE(gemm::UseSmallMatMul(257, 64, 128, ta, tb)) << t;
    EXPECT_FALSE(gemm::UseSmallMatMul(256, 64, 129, ta, tb)) << t;
  }
}

TEST(SmallGemmTest, MatMulMatchesReferenceOnBothSidesOfTheThreshold) {
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    ExpectMatchesReference(gemm::MatMul, {256, 64, 128, ta, tb}, 11);
    ExpectMatchesReference(gemm::MatMul, {257, 64, 128, ta, tb}, 12);
    ExpectMatchesReference(gemm::MatMul, {256, 64, 129, ta, tb}, 13);
  }
}

// A transposed B larger than the stack scratch goes to Eigen.
TEST(SmallGemmTest, SmallMatMulHandlesOperandsBeyondItsScratch) {
  EXPECT_FALSE(gemm::SmallMatMulFits(16, 100, 100, false, true));
  ExpectMatchesReference(gemm::SmallMatMul, {16, 100, 100, false, true}, 5);
  ExpectMatchesReference(gemm::SmallMatMul, {16, 100, 100, true, true}, 6);
}

TEST(SmallGemmTest, TransposeMatchesALoopForTiledAndEdgeShapes) {
  // Shapes with full packet tiles, edges on either side, and strides wider
  // than the rows.
  uint32_t seed = 3;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{32, 10},
                            {10, 32},
                            {16, 16},
                            {32, 64},
                            {48, 33},
                            {8, 8},
                            {1, 1},
                            {17, 9},
                            {3, 40},
                            {64, 10},
                            {10, 64},
                            {15, 33},
                            {33, 15}}) {
    const int64_t lds = cols + 2, ldd = rows + 3;
    std::mt19937 rng(seed++);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> src(rows * lds);
    for (float& x : src) x = u(rng);
    std::vector<float> dst(cols * ldd, kSentinel);
    gemm::Transpose(src.data(), rows, cols, lds, dst.data(), ldd);
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t i = 0; i < ldd; ++i) {
        const float want = i < rows ? src[i * lds + j] : kSentinel;
        ASSERT_EQ(dst[j * ldd + i], want)
            << rows << "x" << cols << " dst(" << j << ", " << i << ")";
      }
    }
  }
}

TEST(SmallGemmTest, EmptyInnerDimensionGivesZeros) {
  for (int64_t n : {3, 8, 17}) {
    std::vector<float> c(4 * n, kSentinel);
    gemm::MatMul(nullptr, nullptr, c.data(), 4, n, 0, false, false);
    for (float x : c) EXPECT_EQ(x, 0.f) << n;
  }
}

// MatMulWithEpilogue against MatMul followed by a plain pass adding the
// bias and taking max(v, 0), bit for bit, over every shape of the sweep
// (direct and transposed small products, padded and overlapping last
// packets, k of 0) and both sides of the small-path threshold.
TEST(SmallGemmTest, MatMulWithEpilogueIsBitForBitMatMulThenAPass) {
  std::vector<Product> shapes;
  const std::vector<int64_t> sizes = {1, 2, 5, 9, 10, 16, 17, 32, 33, 64};
  for (int64_t m : sizes) {
    for (int64_t n : sizes) {
      for (int64_t k : {0, 1, 10, 32, 65}) {
        for (int t = 0; t < 4; ++t) {
          shapes.push_back({m, n, k, (t & 1) != 0, (t & 2) != 0});
        }
      }
    }
  }
  shapes.push_back({257, 64, 128, false, false});  // Eigen's GEMM
  uint32_t seed = 21;
  for (const Product& p : shapes) {
    std::mt19937 rng(seed++);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> a(p.m * p.k), b(p.k * p.n), bias(p.n);
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
    for (float& x : bias) x = u(rng);
    for (bool relu : {false, true}) {
      std::vector<float> want(p.m * p.n + 1, kSentinel);
      gemm::MatMul(a.data(), b.data(), want.data(), p.m, p.n, p.k, p.ta, p.tb);
      for (int64_t i = 0; i < p.m * p.n; ++i) {
        want[i] += bias[i % p.n];
        if (relu) want[i] = std::max(want[i], 0.f);
      }
      std::vector<float> got(p.m * p.n + 1, kSentinel);
      gemm::MatMulWithEpilogue(a.data(), b.data(), got.data(), p.m, p.n, p.k,
                               p.ta, p.tb, {.bias = bias.data(), .relu = relu});
      ASSERT_EQ(got, want) << ::testing::PrintToString(
          std::vector<int64_t>{p.m, p.n, p.k, p.ta, p.tb, relu});
    }
  }
}

TEST(SmallGemmTest, MatMulWithAnEmptyEpilogueIsMatMul) {
  for (const Product& p : kMlpProducts) {
    std::vector<float> a(p.m * p.k), b(p.k * p.n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0.01f * (i % 37) - 0.2f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.02f * (i % 29) - 0.3f;
    std::vector<float> want(p.m * p.n), got(p.m * p.n);
    gemm::MatMul(a.data(), b.data(), want.data(), p.m, p.n, p.k, p.ta, p.tb);
    gemm::MatMulWithEpilogue(a.data(), b.data(), got.data(), p.m, p.n, p.k,
                             p.ta, p.tb, {});
    EXPECT_EQ(got, want) << p.m << "x" << p.n << "x" << p.k;
  }
}

}  // namespace
}  // namespace graphgc
