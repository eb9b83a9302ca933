#include "ops/math_ops.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "ops/ops.h"
#include "ops/registry.h"
#include "ops/gradients.h"
#include "runtime/session.h"
#include "tests/ops/kernel_test_util.h"

namespace graphgc {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::ExpectGradientMatches;
using testing::F;
using ::testing::HasSubstr;
using testing::I32;
using testing::KernelRunner;
using testing::RandomTensor;
using testing::Values;

class MathOpsTest : public ::testing::Test {
 protected:
  Output P(const TensorShape& shape, DataType dt = DT_FLOAT) {
    return ops::Placeholder(g_, dt, shape).value();
  }
  Output C(Tensor t) { return ops::Const(g_, std::move(t)).value(); }
  Graph g_;
  KernelRunner run_;
};

// Reference: c[i][j] = sum_k A[i][k] B[k][j] with optional transposes.
std::vector<float> RefMatMul(const Tensor& a, const Tensor& b, bool ta,
                             bool tb) {
  const int64_t m = a.shape()[ta ? 1 : 0], k = a.shape()[ta ? 0 : 1];
  const int64_t n = b.shape()[tb ? 0 : 1];
  auto A = [&](int64_t i, int64_t j) {
    return ta ? a.data<float>()[j * m + i] : a.data<float>()[i * k + j];
  };
  auto B = [&](int64_t i, int64_t j) {
    return tb ? b.data<float>()[j * k + i] : b.data<float>()[i * n + j];
  };
  std::vector<float> c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l) s += A(i, l) * B(l, j);
      c[i * n + j] = static_cast<float>(s);
    }
  return c;
}

TEST_F(MathOpsTest, MatMulMatchesReferenceForAllTransposes) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Tensor a = RandomTensor(ta ? TensorShape{5, 3} : TensorShape{3, 5}, 1);
      Tensor b = RandomTensor(tb ? TensorShape{4, 5} : TensorShape{5, 4}, 2);
      Output y = ops::MatMul(C(a), C(b), {.transpose_a = ta, .transpose_b = tb})
                     .value();
      EXPECT_EQ(y.shape(), (TensorShape{3, 4}));
      Tensor out = run_.Run1(y).value();
      ASSERT_EQ(out.shape(), (TensorShape{3, 4}));
      std::vector<float> ref = RefMatMul(a, b, ta, tb);
      for (int i = 0; i < 12; ++i) {
        EXPECT_NEAR(out.data<float>()[i], ref[i], 1e-5) << ta << tb << i;
      }
    }
  }
}

// The kernel against RefMatMul over shapes that take the small path
// (ops/small_gemm.h) and shapes that take Eigen's: vectors, fewer columns
// than a packet, odd sizes, the MLP products and both sides of the
// 128^3 threshold (256x64x128 vs 257x64x128).
TEST_F(MathOpsTest, MatMulMatchesReferenceOverShapeSweep) {
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 1, 1},    {1, 9, 5},    {9, 1, 5},    {2, 3, 4},      {7, 8, 1},
      {8, 8, 8},    {9, 10, 11},  {13, 17, 3},  {32, 64, 10},   {32, 10, 64},
      {64, 10, 32}, {10, 64, 32}, {33, 31, 65}, {256, 64, 128}, {257, 64, 128}};
  uint32_t seed = 10;
  for (const std::vector<int64_t>& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        Tensor a =
            RandomTensor(ta ? TensorShape{k, m} : TensorShape{m, k}, seed++);
        Tensor b =
            RandomTensor(tb ? TensorShape{n, k} : TensorShape{k, n}, seed++);
        Output y =
            ops::MatMul(C(a), C(b), {.transpose_a = ta, .transpose_b = tb})
                .value();
        Tensor out = run_.Run1(y).value();
        ASSERT_EQ(out.shape(), (TensorShape{m, n}));
        std::vector<float> ref = RefMatMul(a, b, ta, tb);
        for (int64_t i = 0; i < m * n; ++i) {
          ASSERT_NEAR(out.data<float>()[i], ref[i], 1e-5 * (k + 1))
              << m << "x" << n << "x" << k << " ta " << ta << " tb " << tb
              << " element " << i;
        }
      }
    }
  }
}

TEST_F(MathOpsTest, MatMulWithEmptyInnerDimensionIsZeros) {
  for (int64_t n : {2, 9}) {
    Output y = ops::MatMul(C(F({3, 0}, {})), C(F({0, n}, {}))).value();
    Tensor out = run_.Run1(y).value();
    ASSERT_EQ(out.shape(), (TensorShape{3, n}));
    for (float x : Values(out)) EXPECT_EQ(x, 0.f) << n;
  }
}

TEST_F(MathOpsTest, MatMulWithEmptyOuterDimensionIsEmpty) {
  Output rows =
      ops::MatMul(C(F({0, 4}, {})), C(RandomTensor({4, 9}, 1))).value();
  EXPECT_EQ(run_.Run1(rows).value().shape(), (TensorShape{0, 9}));
  Output cols =
      ops::MatMul(C(RandomTensor({9, 4}, 2)), C(F({4, 0}, {}))).value();
  EXPECT_EQ(run_.Run1(cols).value().shape(), (TensorShape{9, 0}));
}

TEST_F(MathOpsTest, MatMulByHand) {
  Output y =
      ops::MatMul(C(F({2, 2}, {1, 2, 3, 4})), C(F({2, 1}, {5, 6}))).value();
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(17, 39));
}

TEST_F(MathOpsTest, MatMulInnerMismatchAtRunTimeIsInvalidArgument) {
  Output a = P({-1, -1});
  Output y = ops::MatMul(a, C(F({3, 1}, {1, 2, 3}))).value();
  absl::StatusOr<Tensor> r = run_.Run1(y, {{a, F({1, 2}, {1, 2})}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("inner dimensions 2 vs 3"));
}

TEST_F(MathOpsTest, AddV2SameShape) {
  Output y = ops::AddV2(C(F({2}, {1, 2})), C(F({2}, {10, 20}))).value();
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(11, 22));
}

TEST_F(MathOpsTest, AddV2BroadcastsRowVector) {
  Output y = ops::Add(C(F({2, 3}, {1, 2, 3, 4, 5, 6})), C(F({3}, {10, 20, 30})))
                 .value();
  EXPECT_EQ(y.op(), "AddV2");
  EXPECT_THAT(Values(run_.Run1(y).value()),
              ElementsAre(11, 22, 33, 14, 25, 36));
}

TEST_F(MathOpsTest, AddV2BroadcastsScalarOnEitherSide) {
  Output y =
      ops::AddV2(C(F({2, 2}, {1, 2, 3, 4})), C(Tensor::Scalar(1.5f))).value();
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(2.5, 3.5, 4.5, 5.5));
  Output z = ops::Sub(C(Tensor::Scalar(10.f)), C(F({2}, {1, 2}))).value();
  EXPECT_THAT(Values(run_.Run1(z).value()), ElementsAre(9, 8));
}

TEST_F(MathOpsTest, AddV2BroadcastsColumnAgainstRow) {
  // [2,1] + [3] -> [2,3]: the general path.
  Output y = ops::AddV2(C(F({2, 1}, {1, 2})), C(F({3}, {10, 20, 30}))).value();
  Tensor out = run_.Run1(y).value();
  EXPECT_EQ(out.shape(), (TensorShape{2, 3}));
  EXPECT_THAT(Values(out), ElementsAre(11, 21, 31, 12, 22, 32));
}

TEST_F(MathOpsTest, SubBroadcastsAColumnOnEitherSide) {
  // [2,3] - [2,1] and [2,1] - [2,3]: one value per row, order kept.
  Output y =
      ops::Sub(C(F({2, 3}, {1, 2, 3, 4, 5, 6})), C(F({2, 1}, {1, 10}))).value();
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(0, 1, 2, -6, -5, -4));
  Output z =
      ops::Sub(C(F({2, 1}, {1, 10})), C(F({2, 3}, {1, 2, 3, 4, 5, 6}))).value();
  EXPECT_THAT(Values(run_.Run1(z).value()), ElementsAre(0, -1, -2, 6, 5, 4));
}

TEST_F(MathOpsTest, MulBroadcastsTrailingOnesOfHigherRank) {
  // [2,2,2] * [2,1,1]: one value per leading index.
  Output y = ops::Mul(C(F({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})),
                      C(F({2, 1, 1}, {10, -1})))
                 .value();
  EXPECT_THAT(Values(run_.Run1(y).value()),
              ElementsAre(10, 20, 30, 40, -5, -6, -7, -8));
}

TEST_F(MathOpsTest, AddV2IncompatibleShapesFailAtRunTime) {
  Output a = P({-1});
  Output y = ops::AddV2(a, C(F({3}, {1, 2, 3}))).value();
  absl::StatusOr<Tensor> r = run_.Run1(y, {{a, F({2}, {1, 2})}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("incompatible shapes"));
}

TEST_F(MathOpsTest, IntegerArithmetic) {
  Output y = ops::Mul(C(I32({3}, {1, 2, 3})), C(I32({3}, {4, 5, 6}))).value();
  Tensor t = run_.Run1(y).value();
  EXPECT_THAT(
      std::vector<int32_t>(t.data<int32_t>().begin(), t.data<int32_t>().end()),
      ElementsAre(4, 10, 18));
}

TEST_F(MathOpsTest, ElementwiseBinaryValues) {
  Output x = C(F({3}, {1, -2, 6}));
  Output y = C(F({3}, {2, 4, -3}));
  EXPECT_THAT(Values(run_.Run1(ops::Sub(x, y).value()).value()),
              ElementsAre(-1, -6, 9));
  EXPECT_THAT(Values(run_.Run1(ops::Mul(x, y).value()).value()),
              ElementsAre(2, -8, -18));
  EXPECT_THAT(Values(run_.Run1(ops::RealDiv(x, y).value()).value()),
              ElementsAre(0.5, -0.5, -2));
  EXPECT_THAT(Values(run_.Run1(ops::Maximum(x, y).value()).value()),
              ElementsAre(2, 4, 6));
  EXPECT_THAT(Values(run_.Run1(ops::Minimum(x, y).value()).value()),
              ElementsAre(1, -2, -3));
}

TEST_F(MathOpsTest, ComparisonsGiveBool) {
  Output x = C(F({3}, {1, 2, 3}));
  Output y = C(F({3}, {1, 0, 5}));
  Output eq = ops::Equal(x, y).value();
  EXPECT_EQ(eq.dtype(), DT_BOOL);
  Tensor t = run_.Run1(eq).value();
  EXPECT_THAT(std::vector<bool>(t.data<bool>().begin(), t.data<bool>().end()),
              ElementsAre(true, false, false));
  Tensor ge = run_.Run1(ops::GreaterEqual(x, y).value()).value();
  EXPECT_THAT(std::vector<bool>(ge.data<bool>().begin(), ge.data<bool>().end()),
              ElementsAre(true, true, false));
  Tensor lt = run_.Run1(ops::Less(x, y).value()).value();
  EXPECT_THAT(std::vector<bool>(lt.data<bool>().begin(), lt.data<bool>().end()),
              ElementsAre(false, false, true));
}

TEST_F(MathOpsTest, AddNSumsInputs) {
  Output y =
      ops::AddN({C(F({2}, {1, 2})), C(F({2}, {3, 4})), C(F({2}, {5, 6}))})
          .value();
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(9, 12));
}

TEST_F(MathOpsTest, UnaryValues) {
  Output x = C(F({3}, {0.5f, 1.f, 4.f}));
  auto at = [&](absl::StatusOr<Output> o) {
    return Values(run_.Run1(*o).value());
  };
  EXPECT_THAT(at(ops::Neg(x)), ElementsAre(-0.5, -1, -4));
  EXPECT_THAT(at(ops::Square(x)), ElementsAre(0.25, 1, 16));
  EXPECT_THAT(at(ops::Sqrt(x)), ElementsAre(std::sqrt(0.5f), 1, 2));
  std::vector<float> e = at(ops::Exp(x));
  EXPECT_NEAR(e[2], std::exp(4.0), 1e-3);
  std::vector<float> l = at(ops::Log(x));
  EXPECT_NEAR(l[0], std::log(0.5), 1e-6);
  std::vector<float> s = at(ops::Sigmoid(x));
  EXPECT_NEAR(s[1], 1 / (1 + std::exp(-1.0)), 1e-6);
  std::vector<float> t = at(ops::Tanh(x));
  EXPECT_NEAR(t[1], std::tanh(1.0), 1e-6);
}

TEST_F(MathOpsTest, SumOverAxesWithAndWithoutKeepDims) {
  // [2,3,2]
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  Output x = C(F({2, 3, 2}, v));
  Output s1 = ops::Sum(x, {.axes = {1}}).value();
  EXPECT_EQ(s1.shape(), (TensorShape{2, 2}));
  EXPECT_THAT(Values(run_.Run1(s1).value()), ElementsAre(6, 9, 24, 27));
  Output s2 = ops::Sum(x, {.axes = {0, 2}, .keep_dims = true}).value();
  EXPECT_EQ(s2.shape(), (TensorShape{1, 3, 1}));
  Tensor t2 = run_.Run1(s2).value();
  EXPECT_EQ(t2.shape(), (TensorShape{1, 3, 1}));
  EXPECT_THAT(Values(t2),
              ElementsAre(1 + 6 + 7, 2 + 3 + 8 + 9, 4 + 5 + 10 + 11));
  Output s3 = ops::Sum(x, {.axes = {-1}}).value();
  EXPECT_THAT(Values(run_.Run1(s3).value()), ElementsAre(1, 5, 9, 13, 17, 21));
  Output s4 = ops::Sum(x, {.axes = {0}}).value();
  EXPECT_THAT(Values(run_.Run1(s4).value()), ElementsAre(6, 8, 10, 12, 14, 16));
}

TEST_F(MathOpsTest, SumRefusesConstantAxesNamingADimensionTwiceWhenBuilt) {
  Output x = P({2, 3});
  const int64_t before = g_.num_nodes();
  absl::StatusOr<Output> s = ops::Sum(x, {.name = "s", .axes = {1, 1}});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("Sum 's'"));
  EXPECT_THAT(s.status().message(), HasSubstr("more than once"));
  EXPECT_EQ(g_.num_nodes(), before);  // no axes Const left behind
}

TEST_F(MathOpsTest, SumRefusesAnAxisNamedAsPositiveAndNegativeWhenBuilt) {
  Output x = P({2, 3});
  absl::StatusOr<Output> s = ops::Sum(x, {.axes = {1, -1}});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("more than once"));
}

// Runs `y` in a Session with x fed a [2, 3] tensor and `axes` fed
// `axes_value`.
absl::Status RunWithFedAxes(Graph& g, const Output& x, const Output& axes,
                            const Output& y, std::vector<int32_t> axes_value) {
  Session session(g);
  const int64_t k = static_cast<int64_t>(axes_value.size());
  return session
      .Run({{x, F({2, 3}, {1, 2, 3, 4, 5, 6})},
            {axes, I32({k}, std::move(axes_value))}},
           {y})
      .status();
}

TEST_F(MathOpsTest, SumRefusesFedAxesNamingADimensionTwiceAtRunTime) {
  Output x = P({2, 3});
  Output axes = P({2}, DT_INT32);
  Output s = ops::Sum(x, axes, {.name = "s"}).value();
  absl::Status status = RunWithFedAxes(g_, x, axes, s, {0, 0});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("Sum 's'"));
  EXPECT_THAT(status.message(), HasSubstr("more than once"));
}

TEST_F(MathOpsTest, SumRefusesAnAxisBeyondInt32InsteadOfNarrowingIt) {
  // 2^32 + 1 would otherwise become axis 1.
  Output x = P({2, 3});
  absl::StatusOr<Output> s = ops::Sum(x, {.axes = {(int64_t{1} << 32) + 1}});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("out of range"));
}

TEST_F(MathOpsTest, IntegerSumsWrapInsteadOfOverflowing) {
  // Signed overflow is undefined behaviour (reshape_reduce_fuzzer found it
  // in Sum over int32 under UBSan); sums wrap modulo 2^32 for every layout
  // of axes: all, rows, columns.
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  Tensor t =
      Tensor::FromData<int32_t>({2, 2}, std::vector<int32_t>{kMax, 1, kMax, 1})
          .value();
  auto sum = [&](std::vector<int64_t> axes) {
    Output s = ops::Sum(C(t), {.axes = std::move(axes)}).value();
    Tensor out = run_.Run1(s).value();
    return std::vector<int32_t>(out.data<int32_t>().begin(),
                                out.data<int32_t>().end());
  };
  EXPECT_THAT(
      sum({0, 1}),
      ElementsAre(static_cast<int32_t>(2 * static_cast<uint32_t>(kMax) + 2)));
  EXPECT_THAT(sum({1}), ElementsAre(std::numeric_limits<int32_t>::min(),
                                    std::numeric_limits<int32_t>::min()));
  EXPECT_THAT(sum({0}), ElementsAre(-2, 2));
}

// The same class of bug in the elementwise kernels: signed overflow in
// AddV2, Sub, Mul, AddN, Neg and Square is undefined behaviour (UBSan stops
// the sanitizer run); each wraps modulo 2^bits for int32 and int64, for
// same-shape, scalar and broadcast operands alike.
template <typename T>
std::vector<T> IntValuesOf(const Tensor& t) {
  return std::vector<T>(t.data<T>().begin(), t.data<T>().end());
}

TEST_F(MathOpsTest, Int32ElementwiseArithmeticWrapsInsteadOfOverflowing) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  Output big = C(I32({2}, {kMax, kMin}));
  Output one = C(I32({}, {1}));
  Output two = C(I32({2}, {2, 2}));
  Output row = C(I32({2, 2}, {kMax, kMax, kMin, kMin}));
  auto at = [&](absl::StatusOr<Output> y) {
    return IntValuesOf<int32_t>(run_.Run1(y.value()).value());
  };
  EXPECT_THAT(at(ops::AddV2(big, one)), ElementsAre(kMin, kMin + 1));
  EXPECT_THAT(at(ops::AddV2(one, big)), ElementsAre(kMin, kMin + 1));
  EXPECT_THAT(at(ops::Sub(big, C(I32({2}, {-1, 1})))), ElementsAre(kMin, kMax));
  EXPECT_THAT(at(ops::Mul(big, two)), ElementsAre(-2, 0));
  EXPECT_THAT(at(ops::AddV2(row, big)), ElementsAre(-2, -1, -1, 0));
  EXPECT_THAT(at(ops::AddN({big, big, big})), ElementsAre(kMax - 2, kMin));
  EXPECT_THAT(at(ops::Neg(big)), ElementsAre(-kMax, kMin));
  EXPECT_THAT(at(ops::Square(big)), ElementsAre(1, 0));
}

TEST_F(MathOpsTest, Int64ElementwiseArithmeticWrapsInsteadOfOverflowing) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  Output big = C(
      Tensor::FromData<int64_t>({2}, std::vector<int64_t>{kMax, kMin}).value());
  Output one =
      C(Tensor::FromData<int64_t>({}, std::vector<int64_t>{1}).value());
  auto at = [&](absl::StatusOr<Output> y) {
    return IntValuesOf<int64_t>(run_.Run1(y.value()).value());
  };
  EXPECT_THAT(at(ops::AddV2(big, one)), ElementsAre(kMin, kMin + 1));
  EXPECT_THAT(at(ops::Sub(big, one)), ElementsAre(kMax - 1, kMax));
  EXPECT_THAT(at(ops::Mul(big, big)), ElementsAre(1, 0));
  EXPECT_THAT(at(ops::Neg(big)), ElementsAre(-kMax, kMin));
}

TEST_F(MathOpsTest, IntegerMeanTruncatesTheWrappedSumTowardZero) {
  // As TensorFlow: the int sum (wrapped: kMax + 1 - 7 = kMax - 6) divided
  // by the count, truncated toward zero. The count is divided in int64 and
  // never narrowed to int32, where a count of 2^32 would become 0.
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  Output x = C(I32({2, 3}, {kMax, 1, -7, -7, 0, 0}));
  Tensor m = run_.Run1(ops::Mean(x, {.axes = {1}}).value()).value();
  EXPECT_THAT(IntValuesOf<int32_t>(m), ElementsAre((kMax - 6) / 3, -2));
}

TEST_F(MathOpsTest, MeanOverAnEmptyAxisIsNanForFloatsAndZeroForIntegers) {
  Tensor f =
      run_.Run1(ops::Mean(C(F({2, 0}, {})), {.axes = {1}}).value()).value();
  ASSERT_EQ(f.num_elements(), 2);
  EXPECT_TRUE(std::isnan(f.data<float>()[0]));
  Tensor i =
      run_.Run1(ops::Mean(C(I32({2, 0}, {})), {.axes = {1}}).value()).value();
  EXPECT_THAT(IntValuesOf<int32_t>(i), ElementsAre(0, 0));
}

TEST_F(MathOpsTest, MeanRefusesConstantAxesNamingADimensionTwiceWhenBuilt) {
  Output x = P({2, 3});
  absl::StatusOr<Output> m = ops::Mean(x, {.axes = {0, -2}});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("more than once"));
}

TEST_F(MathOpsTest, MeanRefusesFedAxesNamingADimensionTwiceAtRunTime) {
  Output x = P({2, 3});
  Output axes = P({2}, DT_INT32);
  NodeHandle m = BuildNode(g_, "Mean", "m", {x, axes}, {},
                           {{"keep_dims", false}, {"Tidx", DT_INT32}})
                     .value();
  absl::Status status = RunWithFedAxes(g_, x, axes, Output(m, 0), {1, 1});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("more than once"));
}

TEST_F(MathOpsTest, MeanWithoutAxesReducesEverything) {
  Output m = ops::Mean(C(F({2, 2}, {1, 2, 3, 6}))).value();
  EXPECT_EQ(m.shape(), TensorShape{});
  EXPECT_THAT(Values(run_.Run1(m).value()), ElementsAre(3));
  Output k = ops::Mean(C(F({2, 2}, {1, 2, 3, 6})), {.keep_dims = true}).value();
  EXPECT_EQ(k.shape(), (TensorShape{1, 1}));
}

TEST_F(MathOpsTest, MeanOverRowsKeepsColumns) {
  Output m = ops::Mean(C(F({2, 2}, {1, 2, 3, 6})), {.axes = {0}}).value();
  EXPECT_THAT(Values(run_.Run1(m).value()), ElementsAre(2, 4));
}

TEST_F(MathOpsTest, ReduceAxisOutOfRangeIsBuildError) {
  Output x = C(F({2}, {1, 2}));
  const int64_t before = g_.num_nodes();
  absl::StatusOr<Output> s = ops::Sum(x, {.axes = {3}});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("axis 3 is out of range"));
  EXPECT_EQ(g_.num_nodes(), before);  // no axes Const left behind
}

TEST_F(MathOpsTest, ArgMaxAlongAxis) {
  Output x = C(F({2, 3}, {1, 5, 2, 9, 0, 3}));
  Output a = ops::ArgMax(x, 1).value();
  EXPECT_EQ(a.dtype(), DT_INT64);
  EXPECT_EQ(a.shape(), TensorShape{2});
  Tensor t = run_.Run1(a).value();
  EXPECT_THAT(
      std::vector<int64_t>(t.data<int64_t>().begin(), t.data<int64_t>().end()),
      ElementsAre(1, 0));
  Tensor t0 =
      run_.Run1(ops::ArgMax(x, 0, {.output_type = DT_INT32}).value()).value();
  EXPECT_THAT(std::vector<int32_t>(t0.data<int32_t>().begin(),
                                   t0.data<int32_t>().end()),
              ElementsAre(1, 0, 1));
}

// --- gradients ---

TEST_F(MathOpsTest, MatMulGradientsAllTransposes) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      TensorShape sa = ta ? TensorShape{4, 3} : TensorShape{3, 4};
      TensorShape sb = tb ? TensorShape{2, 4} : TensorShape{4, 2};
      Output a = P(sa), b = P(sb);
      Output y =
          ops::MatMul(a, b, {.transpose_a = ta, .transpose_b = tb}).value();
      testing::Feeds feeds = {{a, RandomTensor(sa, 3)},
                              {b, RandomTensor(sb, 4)}};
      ExpectGradientMatches(y, feeds, 0);
      ExpectGradientMatches(y, feeds, 1);
    }
  }
}

TEST_F(MathOpsTest, BinaryGradientsWithBroadcasting) {
  // x [2,3] against y [3] (row broadcast) and y scalar.
  for (const char* op :
       {"AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum"}) {
    for (TensorShape ys : {TensorShape{3}, TensorShape{}, TensorShape{2, 3},
                           TensorShape{2, 1}}) {
      Output x = P({2, 3}), y = P(ys);
      NodeHandle h = BuildNode(g_, op, "", {x, y}, {}, {}).value();
      Output out(h, 0);
      testing::Feeds feeds = {{x, RandomTensor({2, 3}, 5, 0.5f, 2.f)},
                              {y, RandomTensor(ys, 6, 0.5f, 2.f)}};
      SCOPED_TRACE(std::string(op) + " y " + ys.DebugString());
      ExpectGradientMatches(out, feeds, 0);
      ExpectGradientMatches(out, feeds, 1);
    }
  }
}

TEST_F(MathOpsTest, BroadcastGradientWithUnknownDimensionsUsesRuntimeShapes) {
  // Both [?, ?]: which axes broadcast is known only at run time.
  Output x = P({-1, -1}), y = P({-1, -1});
  Output out = ops::Mul(x, y).value();
  testing::Feeds feeds = {{x, RandomTensor({2, 3}, 8)},
                          {y, RandomTensor({1, 3}, 9)}};
  ExpectGradientMatches(out, feeds, 0);
  ExpectGradientMatches(out, feeds, 1);
}

TEST_F(MathOpsTest, BatchAddGradientIsStaticForRowBias) {
  Output x = P({-1, 3}), b = P({3});
  Output y = ops::AddV2(x, b).value();
  testing::Feeds feeds = {{x, RandomTensor({4, 3}, 8)},
                          {b, RandomTensor({3}, 9)}};
  ExpectGradientMatches(y, feeds, 0);
  ExpectGradientMatches(y, feeds, 1);
}

TEST_F(MathOpsTest, UnaryGradients) {
  for (const char* op :
       {"Neg", "Square", "Sqrt", "Exp", "Log", "Sigmoid", "Tanh"}) {
    Output x = P({2, 3});
    Output y(BuildNode(g_, op, "", {x}, {}, {}).value(), 0);
    SCOPED_TRACE(op);
    ExpectGradientMatches(y, {{x, RandomTensor({2, 3}, 10, 0.5f, 2.f)}}, 0);
  }
}

TEST_F(MathOpsTest, AddNGradient) {
  Output a = P({2}), b = P({2});
  Output y = ops::AddN({a, b}).value();
  testing::Feeds feeds = {{a, RandomTensor({2}, 1)}, {b, RandomTensor({2}, 2)}};
  ExpectGradientMatches(y, feeds, 0);
  ExpectGradientMatches(y, feeds, 1);
}

TEST_F(MathOpsTest, ReductionGradients) {
  Output x = P({2, 3, 2});
  testing::Feeds feeds = {{x, RandomTensor({2, 3, 2}, 11)}};
  ExpectGradientMatches(ops::Sum(x, {.axes = {1}}).value(), feeds, 0);
  ExpectGradientMatches(
      ops::Sum(x, {.axes = {0, 2}, .keep_dims = true}).value(), feeds, 0);
  ExpectGradientMatches(ops::Mean(x).value(), feeds, 0);
  ExpectGradientMatches(ops::Mean(x, {.axes = {2}}).value(), feeds, 0);
}

// A loss is a full reduction: its output has one element, so the gradient
// divides by Size(x) alone rather than by Size(x) / Size(y) each step.
TEST_F(MathOpsTest, FullMeanGradientDividesBySizeOfTheInputOnly) {
  Output x = P({-1, 3});
  Output y = ops::Mean(x, {.name = "loss"}).value();
  ASSERT_TRUE(AddGradients(y, {x}, std::nullopt, "g").ok());
  EXPECT_TRUE(g_.FindNode("g/loss_grad/Size").has_value());
  EXPECT_FALSE(g_.FindNode("g/loss_grad/Size_1").has_value());
  EXPECT_FALSE(g_.FindNode("g/loss_grad/count").has_value());
  Output partial = ops::Mean(x, {.name = "partial", .axes = {0}}).value();
  ASSERT_TRUE(AddGradients(partial, {x}, std::nullopt, "h").ok());
  EXPECT_TRUE(g_.FindNode("h/partial_grad/Size_1").has_value());
}

TEST_F(MathOpsTest, MeanGradientWithUnknownBatch) {
  Output x = P({-1, -1, 2});
  testing::Feeds feeds = {{x, RandomTensor({3, 2, 2}, 12)}};
  ExpectGradientMatches(ops::Mean(x).value(), feeds, 0);
  ExpectGradientMatches(ops::Mean(x, {.axes = {2}}).value(), feeds, 0);
  ExpectGradientMatches(ops::Sum(x, {.axes = {1}}).value(), feeds, 0);
}

TEST_F(MathOpsTest, ComparisonsAndArgMaxHaveNoGradient) {
  for (const char* op :
       {"Equal", "Greater", "GreaterEqual", "Less", "LessEqual", "ArgMax"}) {
    EXPECT_FALSE(GlobalOpRegistry().Lookup(op).value()->def.gradient) << op;
  }
}

}  // namespace
}  // namespace graphgc
