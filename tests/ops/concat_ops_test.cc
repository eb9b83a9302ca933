#include "ops/concat_ops.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "ops/registry.h"
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

class ConcatOpsTest : public ::testing::Test {
 protected:
  Output P(const TensorShape& shape, DataType dt = DT_FLOAT,
           std::string name = "") {
    return ops::Placeholder(g_, dt, shape, {.name = std::move(name)}).value();
  }
  Output C(Tensor t) { return ops::Const(g_, std::move(t)).value(); }
  Graph g_;
  KernelRunner run_;
};

TEST_F(ConcatOpsTest, ConcatV2JoinsAlongTheLastAxis) {
  Output y =
      ops::ConcatV2({C(F({2, 1}, {1, 2})), C(F({2, 2}, {3, 4, 5, 6}))}, -1)
          .value();
  EXPECT_EQ(y.shape(), (TensorShape{2, 3}));
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(1, 3, 4, 2, 5, 6));
}

TEST_F(ConcatOpsTest, ConcatV2JoinsAlongTheFirstAndAMiddleAxis) {
  Tensor a = F({1, 2, 2}, {1, 2, 3, 4});
  Tensor b = F({1, 1, 2}, {5, 6});
  Output mid = ops::ConcatV2({C(a), C(b)}, 1).value();
  EXPECT_EQ(mid.shape(), (TensorShape{1, 3, 2}));
  EXPECT_THAT(Values(run_.Run1(mid).value()), ElementsAre(1, 2, 3, 4, 5, 6));
  Output first = ops::ConcatV2({C(a), C(a)}, -3).value();
  EXPECT_EQ(first.shape(), (TensorShape{2, 2, 2}));
  EXPECT_THAT(Values(run_.Run1(first).value()),
              ElementsAre(1, 2, 3, 4, 1, 2, 3, 4));
}

TEST_F(ConcatOpsTest, ConcatV2KeepsANanInItsOwnElement) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Output y =
      ops::ConcatV2({C(F({1, 2}, {nan, 1})), C(F({1, 1}, {2}))}, 1).value();
  std::vector<float> v = Values(run_.Run1(y).value());
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 1);
  EXPECT_EQ(v[2], 2);
}

TEST_F(ConcatOpsTest, ConcatV2OfIntegersAndBools) {
  Output y = ops::ConcatV2({C(I32({2}, {1, 2})), C(I32({1}, {3}))}, 0).value();
  Tensor t = run_.Run1(y).value();
  EXPECT_THAT(
      std::vector<int32_t>(t.data<int32_t>().begin(), t.data<int32_t>().end()),
      ElementsAre(1, 2, 3));
  Output b =
      ops::ConcatV2({C(Tensor::Scalar<bool>(true).Reshaped({1}).value()),
                     C(Tensor::Scalar<bool>(false).Reshaped({1}).value())},
                    0)
          .value();
  Tensor bt = run_.Run1(b).value();
  EXPECT_TRUE(bt.data<bool>()[0]);
  EXPECT_FALSE(bt.data<bool>()[1]);
}

TEST_F(ConcatOpsTest, ConcatV2InfersAKnownShapeFromPartlyUnknownInputs) {
  Output y = ops::ConcatV2({P({-1, 3}), P({4, 2})}, 1).value();
  EXPECT_EQ(y.shape(), (TensorShape{4, 5}));
  Output z = ops::ConcatV2({P({-1, 3}), P({-1, 3})}, 0).value();
  EXPECT_EQ(z.shape(), (TensorShape{-1, 3}));
}

TEST_F(ConcatOpsTest, ConcatV2RefusesAMismatchedDimensionNamingBothShapes) {
  Output a = P({2, 3});
  Output b = P({4, 3});
  const int64_t before = g_.num_nodes();
  absl::StatusOr<Output> y = ops::ConcatV2({a, b}, 1, {.name = "c"});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      y.status().message(),
      HasSubstr("ConcatV2 'c': ConcatOp : Dimension 0 in both shapes "
                "must be equal: shape[0] = [2,3] vs. shape[1] = [4,3]"));
  EXPECT_EQ(g_.num_nodes(), before);  // no axis Const left behind
}

TEST_F(ConcatOpsTest, ConcatV2RefusesMismatchedRanksAndScalars) {
  absl::StatusOr<Output> y = ops::ConcatV2({P({2, 3}), P({2})}, 0);
  EXPECT_THAT(y.status().message(),
              HasSubstr("Ranks of all input tensors should match"));
  absl::StatusOr<Output> s = ops::ConcatV2(
      {C(Tensor::Scalar<float>(1)), C(Tensor::Scalar<float>(2))}, 0);
  EXPECT_THAT(s.status().message(), HasSubstr("Can't concatenate scalars"));
}

TEST_F(ConcatOpsTest, ConcatV2RefusesAnAxisOutOfRange) {
  absl::StatusOr<Output> y = ops::ConcatV2({P({2, 3}), P({2, 3})}, 2);
  EXPECT_THAT(y.status().message(),
              HasSubstr("Expected concatenating dimensions in the range "
                        "[-2, 2), but got 2"));
  absl::StatusOr<Output> z = ops::ConcatV2({P({2, 3}), P({2, 3})}, -3);
  EXPECT_THAT(z.status().message(), HasSubstr("but got -3"));
}

TEST_F(ConcatOpsTest, ConcatV2NeedsTwoValues) {
  absl::StatusOr<Output> y = ops::ConcatV2({P({2, 3})}, 0, {.name = "one"});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(), HasSubstr("takes at least 3 inputs"));
}

TEST_F(ConcatOpsTest, ConcatV2RecordsNAsTheNumberOfValues) {
  Output y = ops::ConcatV2({P({2}), P({2}), P({2})}, 0).value();
  NodeInfo info = g_.Describe(y.handle()).value();
  EXPECT_EQ(GetAttr<int64_t>(info.attrs, "N").value(), 3);
  EXPECT_EQ(GetAttr<DataType>(info.attrs, "Tidx").value(), DT_INT32);
  EXPECT_EQ(info.inputs.size(), 4u);
}

TEST_F(ConcatOpsTest, ConcatV2RefusesAMismatchedFeedAtRunTime) {
  Output a = P({-1, -1}, DT_FLOAT, "a");
  Output b = P({-1, -1}, DT_FLOAT, "b");
  Output y = ops::ConcatV2({a, b}, 1, {.name = "c"}).value();
  absl::StatusOr<Tensor> r = run_.Run1(
      y, {{a, RandomTensor({2, 3}, 1)}, {b, RandomTensor({3, 3}, 2)}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("'c'"));
  EXPECT_THAT(r.status().message(),
              HasSubstr("Dimension 0 in both shapes must be equal"));
}

TEST_F(ConcatOpsTest, ConcatV2OfEmptyInputsIsEmpty) {
  Output y = ops::ConcatV2({P({0, 3}), P({0, 2})}, 1).value();
  Tensor t =
      run_.Run1(y, {{g_.Describe(y.handle()).value().inputs[0], F({0, 3}, {})},
                    {g_.Describe(y.handle()).value().inputs[1], F({0, 2}, {})}})
          .value();
  EXPECT_EQ(t.shape(), (TensorShape{0, 5}));
}

TEST_F(ConcatOpsTest, ConcatV2GradientMatchesCentralDifferences) {
  Output a = P({2, 3});
  Output b = P({2, 1});
  Output c = P({2, 2});
  Output y = ops::ConcatV2({a, b, c}, -1).value();
  std::vector<std::pair<Output, Tensor>> feeds = {{a, RandomTensor({2, 3}, 1)},
                                                  {b, RandomTensor({2, 1}, 2)},
                                                  {c, RandomTensor({2, 2}, 3)}};
  for (int i = 0; i < 3; ++i) ExpectGradientMatches(y, feeds, i);
}

TEST_F(ConcatOpsTest, ConcatV2GradientAlongAnUnknownBatchOfAMiddleAxis) {
  Output a = P({-1, 2, 3});
  Output b = P({-1, 1, 3});
  Output y = ops::ConcatV2({a, b}, 1).value();
  std::vector<std::pair<Output, Tensor>> feeds = {
      {a, RandomTensor({2, 2, 3}, 4)}, {b, RandomTensor({2, 1, 3}, 5)}};
  ExpectGradientMatches(y, feeds, 0);
  ExpectGradientMatches(y, feeds, 1);
}

TEST_F(ConcatOpsTest, SliceTakesARangeOfEachAxis) {
  Output x = C(F({2, 3}, {1, 2, 3, 4, 5, 6}));
  Output s = ops::Slice(x, {0, 1}, {-1, 2}).value();
  EXPECT_EQ(s.shape(), (TensorShape{2, 2}));
  EXPECT_THAT(Values(run_.Run1(s).value()), ElementsAre(2, 3, 5, 6));
  Output t = ops::Slice(x, {1, 0}, {1, 3}).value();
  EXPECT_THAT(Values(run_.Run1(t).value()), ElementsAre(4, 5, 6));
}

TEST_F(ConcatOpsTest, SliceRefusesARangePastTheEnd) {
  Output x = P({2, 3});
  absl::StatusOr<Output> s = ops::Slice(x, {0, 2}, {-1, 2}, {.name = "s"});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(),
              HasSubstr("Slice 's': Expected size[1] in [0, 1], but got 2"));
  absl::StatusOr<Output> b = ops::Slice(x, {3, 0}, {-1, -1});
  EXPECT_THAT(b.status().message(),
              HasSubstr("Expected begin[0] in [0, 2], but got 3"));
  absl::StatusOr<Output> w = ops::Slice(x, {0}, {1});
  EXPECT_THAT(w.status().message(), HasSubstr("1-D tensors of size 2"));
}

// begin + size wraps int64: refused, not wrapped into range.
TEST_F(ConcatOpsTest, SliceRefusesASizeWhoseEndOverflows) {
  Output x = P({-1, -1}, DT_FLOAT, "x");
  absl::StatusOr<Output> s = ops::Slice(
      x, {1, 0}, {std::numeric_limits<int64_t>::max(), -1}, {.name = "s"});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("Expected size[0]"));
}

}  // namespace
}  // namespace graphgc
