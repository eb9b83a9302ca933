#include "ops/array_ops.h"

#include "gtest/gtest.h"
#include "ops/ops.h"
#include "runtime/session.h"
#include "tests/ops/kernel_test_util.h"

namespace graphgc {
namespace {

using ::testing::ElementsAre;
using testing::ExpectGradientMatches;
using testing::F;
using ::testing::HasSubstr;
using testing::I32;
using testing::KernelRunner;
using testing::RandomTensor;
using testing::Values;

std::vector<int32_t> Ints(const Tensor& t) {
  return std::vector<int32_t>(t.data<int32_t>().begin(),
                              t.data<int32_t>().end());
}

class ArrayOpsTest : public ::testing::Test {
 protected:
  Output P(const TensorShape& shape, DataType dt = DT_FLOAT) {
    return ops::Placeholder(g_, dt, shape).value();
  }
  Output C(Tensor t) { return ops::Const(g_, std::move(t)).value(); }
  Graph g_;
  KernelRunner run_;
};

TEST_F(ArrayOpsTest, UnfedPlaceholderSaysItMustBeFed) {
  Output x = ops::Placeholder(g_, DT_FLOAT, {-1, 3}, {.name = "x"}).value();
  absl::StatusOr<Tensor> r = run_.Run1(x);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("Placeholder 'x'"));
  EXPECT_THAT(r.status().message(), HasSubstr("must be fed"));
}

TEST_F(ArrayOpsTest, ConstAndIdentityPassTheValue) {
  Output c = C(F({2}, {3, 4}));
  EXPECT_EQ(c.shape(), TensorShape{2});
  EXPECT_THAT(Values(run_.Run1(ops::Identity(c).value()).value()),
              ElementsAre(3, 4));
  EXPECT_THAT(Values(run_.Run1(ops::StopGradient(c).value()).value()),
              ElementsAre(3, 4));
}

TEST_F(ArrayOpsTest, ScalarConstOverload) {
  Output c = ops::Const(g_, 2.5f).value();
  EXPECT_EQ(c.dtype(), DT_FLOAT);
  EXPECT_EQ(c.shape(), TensorShape{});
  Output i = ops::Const(g_, int32_t{7}).value();
  EXPECT_EQ(i.dtype(), DT_INT32);
}

TEST_F(ArrayOpsTest, ReshapeInfersMinusOneStaticallyAndAtRunTime) {
  Output x = P({-1, 6});
  Output r = ops::Reshape(x, {-1, 2, 3}).value();
  EXPECT_EQ(r.shape(), (TensorShape{-1, 2, 3}));
  Output c = ops::Reshape(C(F({2, 3}, {1, 2, 3, 4, 5, 6})), {3, -1}).value();
  EXPECT_EQ(c.shape(), (TensorShape{3, 2}));
  Tensor t = run_.Run1(r, {{x, RandomTensor({2, 6}, 1)}}).value();
  EXPECT_EQ(t.shape(), (TensorShape{2, 2, 3}));
}

TEST_F(ArrayOpsTest, ReshapeWrongSizeIsBuildError) {
  Output c = C(F({2, 3}, {1, 2, 3, 4, 5, 6}));
  const int64_t before = g_.num_nodes();
  absl::StatusOr<Output> r = ops::Reshape(c, {4, 2}, {.name = "bad"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("Reshape 'bad'"));
  EXPECT_EQ(g_.num_nodes(), before);  // no shape Const left behind
}

// 7 * 0x6DB6DB6DB6DB6DB7 is 1 modulo 2^64, and 4 * (2^62 + 1) is 4: fed
// shapes whose element counts wrap int64 to the input's count.
constexpr int64_t kWrapsToOneWith7 = 0x6DB6DB6DB6DB6DB7;
constexpr int64_t kWrapsToFourWith4 = (int64_t{1} << 62) + 1;

Tensor I64(const TensorShape& shape, std::vector<int64_t> v) {
  return Tensor::FromData<int64_t>(shape, v).value();
}

TEST_F(ArrayOpsTest, ReshapeRefusesAFedShapeWhoseCountWrapsBeforeSumReadsIt) {
  Output x = P({-1});
  Output shape = P({2}, DT_INT64);
  Output r = ops::Reshape(x, shape, {.name = "r"}).value();
  Output sum = ops::Sum(r, {.axes = {1}}).value();
  Session session(g_);
  absl::StatusOr<std::vector<Tensor>> out = session.Run(
      {{x, F({1}, {5})}, {shape, I64({2}, {7, kWrapsToOneWith7})}}, {sum});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("Reshape 'r'"));
  EXPECT_THAT(out.status().message(), HasSubstr("too many elements"));
}

TEST_F(ArrayOpsTest,
       ReshapeRefusesAFedShapeWhoseCountWrapsBeforeArgMaxReadsIt) {
  Output x = P({-1});
  Output shape = P({2}, DT_INT64);
  Output r = ops::Reshape(x, shape, {.name = "r"}).value();
  Output arg = ops::ArgMax(r, 1).value();
  Session session(g_);
  absl::StatusOr<std::vector<Tensor>> out = session.Run(
      {{x, F({4}, {1, 2, 3, 4})}, {shape, I64({2}, {4, kWrapsToFourWith4})}},
      {arg});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("too many elements"));
}

TEST_F(ArrayOpsTest, ReshapeRefusesAFedShapeWithMinusOneWhoseKnownCountWraps) {
  // Without the check the -1 resolved to 1: [1, 2^62 + 1, 4].
  Output x = P({-1});
  Output shape = P({3}, DT_INT64);
  Output r = ops::Reshape(x, shape).value();
  Session session(g_);
  absl::StatusOr<std::vector<Tensor>> out =
      session.Run({{x, F({4}, {1, 2, 3, 4})},
                   {shape, I64({3}, {-1, kWrapsToFourWith4, 4})}},
                  {r});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("too many elements"));
}

TEST_F(ArrayOpsTest, ReshapeRefusesAConstantShapeWhoseCountWrapsWhenBuilt) {
  Output x = P({-1});
  Output shape = C(I64({2}, {7, kWrapsToOneWith7}));
  const int64_t before = g_.num_nodes();
  absl::StatusOr<Output> r = ops::Reshape(x, shape, {.name = "bad"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("Reshape 'bad'"));
  EXPECT_THAT(r.status().message(), HasSubstr("too many elements"));
  EXPECT_EQ(g_.num_nodes(), before);
}

TEST_F(ArrayOpsTest, ReshapeToShapeOfKeepsKnownDims) {
  Output x = P({-1, 3});
  Output y = P({-1});
  Output r = ops::Reshape(y, ops::Shape(x).value()).value();
  EXPECT_EQ(r.shape(), (TensorShape{-1, 3}));
}

TEST_F(ArrayOpsTest, ShapeAndSize) {
  Output x = P({-1, 3});
  Tensor s =
      run_.Run1(ops::Shape(x).value(), {{x, RandomTensor({4, 3}, 1)}}).value();
  EXPECT_THAT(Ints(s), ElementsAre(4, 3));
  Tensor n =
      run_.Run1(ops::Size(x).value(), {{x, RandomTensor({4, 3}, 1)}}).value();
  EXPECT_THAT(Ints(n), ElementsAre(12));
}

TEST_F(ArrayOpsTest, FillZerosLikeOnesLike) {
  Output f = ops::Fill(C(I32({2}, {2, 2})), C(Tensor::Scalar(7.f))).value();
  EXPECT_EQ(f.shape(), (TensorShape{2, 2}));
  EXPECT_THAT(Values(run_.Run1(f).value()), ElementsAre(7, 7, 7, 7));
  Output x = C(F({3}, {1, 2, 3}));
  EXPECT_THAT(Values(run_.Run1(ops::ZerosLike(x).value()).value()),
              ElementsAre(0, 0, 0));
  EXPECT_THAT(Values(run_.Run1(ops::OnesLike(x).value()).value()),
              ElementsAre(1, 1, 1));
}

TEST_F(ArrayOpsTest, CastBetweenTypes) {
  Output x = C(F({3}, {1.7f, -2.2f, 0.f}));
  Tensor i = run_.Run1(ops::Cast(x, DT_INT32).value()).value();
  EXPECT_THAT(Ints(i), ElementsAre(1, -2, 0));
  Tensor b = run_.Run1(ops::Cast(x, DT_BOOL).value()).value();
  EXPECT_THAT(std::vector<bool>(b.data<bool>().begin(), b.data<bool>().end()),
              ElementsAre(true, true, false));
  Output eq = ops::Equal(C(I32({2}, {1, 2})), C(I32({2}, {1, 3}))).value();
  EXPECT_THAT(Values(run_.Run1(ops::Cast(eq, DT_FLOAT).value()).value()),
              ElementsAre(1, 0));
}

TEST_F(ArrayOpsTest, CastOfFloatsOutsideTheIntegerRangeSaturatesAndNanIsZero) {
  // A float out of the target's range converted to it is undefined
  // behaviour in C++; Cast clamps to the range and maps NaN to 0 (XLA's
  // rule) so that every input has one defined result.
  const float inf = std::numeric_limits<float>::infinity();
  Output x = C(F({6}, {3e9f, -3e9f, inf, -inf,
                       std::numeric_limits<float>::quiet_NaN(), -2.9f}));
  EXPECT_THAT(Ints(run_.Run1(ops::Cast(x, DT_INT32).value()).value()),
              ElementsAre(std::numeric_limits<int32_t>::max(),
                          std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max(),
                          std::numeric_limits<int32_t>::min(), 0, -2));
  Tensor l = run_.Run1(ops::Cast(x, DT_INT64).value()).value();
  EXPECT_THAT(
      std::vector<int64_t>(l.data<int64_t>().begin(), l.data<int64_t>().end()),
      ElementsAre(3000000000LL, -3000000000LL,
                  std::numeric_limits<int64_t>::max(),
                  std::numeric_limits<int64_t>::min(), 0, -2));
}

TEST_F(ArrayOpsTest, TransposeMatrixAnd3d) {
  Output m = ops::Transpose(C(F({2, 3}, {1, 2, 3, 4, 5, 6})), {1, 0}).value();
  EXPECT_EQ(m.shape(), (TensorShape{3, 2}));
  EXPECT_THAT(Values(run_.Run1(m).value()), ElementsAre(1, 4, 2, 5, 3, 6));
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i);
  Output t = ops::Transpose(C(F({2, 3, 4}, v)), {2, 0, 1}).value();
  Tensor out = run_.Run1(t).value();
  ASSERT_EQ(out.shape(), (TensorShape{4, 2, 3}));
  // out[k][i][j] = in[i][j][k]
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(out.data<float>()[k * 6 + i * 3 + j], i * 12 + j * 4 + k);
}

TEST_F(ArrayOpsTest, TransposeBadPermIsBuildError) {
  absl::StatusOr<Output> t = ops::Transpose(P({2, 3}), {0, 0});
  EXPECT_THAT(t.status().message(), HasSubstr("not a permutation"));
}

TEST_F(ArrayOpsTest, BroadcastGradientArgsMatchesTensorFlow) {
  ops::BroadcastGradientArgsOutputs r =
      ops::BroadcastGradientArgs(C(I32({3}, {2, 3, 4})), C(I32({2}, {1, 4})))
          .value();
  std::vector<Tensor> out = run_.Run({r.r0, r.r1}).value();
  EXPECT_TRUE(Ints(out[0]).empty());
  EXPECT_THAT(Ints(out[1]), ElementsAre(0, 1));
}

TEST_F(ArrayOpsTest, Gradients) {
  Output x = P({2, 3});
  testing::Feeds feeds = {{x, RandomTensor({2, 3}, 3)}};
  ExpectGradientMatches(ops::Identity(x).value(), feeds, 0);
  ExpectGradientMatches(ops::Reshape(x, {3, 2}).value(), feeds, 0);
  ExpectGradientMatches(ops::Transpose(x, {1, 0}).value(), feeds, 0);
  ExpectGradientMatches(ops::Cast(x, DT_FLOAT).value(), feeds, 0);
  Output v = P({});
  ExpectGradientMatches(ops::Fill(C(I32({2}, {2, 2})), v).value(),
                        {{v, Tensor::Scalar(1.5f)}}, 1);
}

TEST_F(ArrayOpsTest, ReshapeGradientWithUnknownDims) {
  Output x = P({-1, -1});
  ExpectGradientMatches(ops::Reshape(x, {-1}).value(),
                        {{x, RandomTensor({2, 3}, 3)}}, 0);
}

TEST_F(ArrayOpsTest, StopGradientAndShapeOpsHaveNoGradient) {
  for (const char* op : {"StopGradient", "Shape", "Size", "ZerosLike",
                         "OnesLike", "Placeholder", "Const"}) {
    EXPECT_FALSE(GlobalOpRegistry().Lookup(op).value()->def.gradient) << op;
  }
}

}  // namespace
}  // namespace graphgc
