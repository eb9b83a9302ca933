#include "util/float_mode.h"

#include <limits>

#include "gtest/gtest.h"

namespace graphgc {
namespace {

// Products the compiler cannot fold: the operands are read at run time.
float Product(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x * y;
}

constexpr float kTiny = 1e-20f;  // kTiny * kTiny = 1e-40, a denormal
constexpr float kDenormal = std::numeric_limits<float>::denorm_min() * 1000;

TEST(ScopedFlushDenormals, WithoutItADenormalResultIsKept) {
  EXPECT_GT(Product(kTiny, kTiny), 0.f);
  EXPECT_LT(Product(kTiny, kTiny), std::numeric_limits<float>::min());
}

TEST(ScopedFlushDenormals, ADenormalResultIsZeroInsideTheScope) {
  if (!ScopedFlushDenormals::kFlushesDenormals) GTEST_SKIP();
  ScopedFlushDenormals flush;
  EXPECT_EQ(Product(kTiny, kTiny), 0.f);
}

TEST(ScopedFlushDenormals, ADenormalInputReadsAsZeroInsideTheScope) {
  if (!ScopedFlushDenormals::kFlushesDenormals) GTEST_SKIP();
  ASSERT_GT(Product(kDenormal, 1e30f), 0.f);
  ScopedFlushDenormals flush;
  EXPECT_EQ(Product(kDenormal, 1e30f), 0.f);
}

TEST(ScopedFlushDenormals, NormalResultsAreUnchangedInsideTheScope) {
  const float outside = Product(1.5f, std::numeric_limits<float>::min());
  ScopedFlushDenormals flush;
  EXPECT_EQ(Product(1.5f, std::numeric_limits<float>::min()), outside);
}

TEST(ScopedFlushDenormals, TheThreadsModeComesBackWhenTheScopeEnds) {
  { ScopedFlushDenormals flush; }
  EXPECT_GT(Product(kTiny, kTiny), 0.f);
}

TEST(ScopedFlushDenormals, ANestedScopeLeavesTheOuterOneFlushing) {
  if (!ScopedFlushDenormals::kFlushesDenormals) GTEST_SKIP();
  ScopedFlushDenormals outer;
  { ScopedFlushDenormals inner; }
  EXPECT_EQ(Product(kTiny, kTiny), 0.f);
}

}  // namespace
}  // namespace graphgc
