#include "ops/gather_ops.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gradients.h"
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

class GatherOpsTest : public ::testing::Test {
 protected:
  Output P(const TensorShape& shape, DataType dt = DT_FLOAT,
           std::string name = "") {
    return ops::Placeholder(g_, dt, shape, {.name = std::move(name)}).value();
  }
  Output C(Tensor t) { return ops::Const(g_, std::move(t)).value(); }
  Graph g_;
  KernelRunner run_;
};

TEST_F(GatherOpsTest, GatherV2TakesRowsAtTheIndices) {
  Output params = C(F({3, 2}, {1, 2, 3, 4, 5, 6}));
  Output y = ops::GatherV2(params, C(I32({2, 2}, {2, 0, 1, 2})), 0).value();
  EXPECT_EQ(y.shape(), (TensorShape{2, 2, 2}));
  EXPECT_THAT(Values(run_.Run1(y).value()),
              ElementsAre(5, 6, 1, 2, 3, 4, 5, 6));
}

TEST_F(GatherOpsTest, GatherV2AlongTheLastAxisWithInt64Indices) {
  Output params = C(F({2, 3}, {1, 2, 3, 4, 5, 6}));
  Tensor ids = Tensor::FromData<int64_t>({2}, {2, 0}).value();
  Output y = ops::GatherV2(params, C(ids), -1).value();
  EXPECT_EQ(y.shape(), (TensorShape{2, 2}));
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(3, 1, 6, 4));
}

TEST_F(GatherOpsTest, GatherV2KeepsAnUnknownBatchOfIndices) {
  Output y = ops::GatherV2(P({5, 4}), P({-1, 3}, DT_INT32), 0).value();
  EXPECT_EQ(y.shape(), (TensorShape{-1, 3, 4}));
}

TEST_F(GatherOpsTest, GatherV2RefusesAnOutOfRangeIndexNamingItAndTheNode) {
  Output ids = P({2, 2}, DT_INT32);
  Output y = ops::GatherV2(C(F({3, 1}, {1, 2, 3})), ids, 0, {.name = "lookup"})
                 .value();
  absl::StatusOr<Tensor> r = run_.Run1(y, {{ids, I32({2, 2}, {0, 1, 2, 3})}});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("GatherV2 'lookup'"));
  EXPECT_THAT(r.status().message(),
              HasSubstr("indices[1,1] = 3 is not in [0, 3)"));
  r = run_.Run1(y, {{ids, I32({2, 2}, {0, -1, 0, 0})}});
  EXPECT_THAT(r.status().message(),
              HasSubstr("indices[0,1] = -1 is not in [0, 3)"));
}

TEST_F(GatherOpsTest, GatherV2RefusesScalarParamsAndABadAxisAtBuild) {
  Output ids = P({2}, DT_INT32);
  absl::StatusOr<Output> y = ops::GatherV2(C(Tensor::Scalar<float>(1)), ids, 0);
  EXPECT_THAT(y.status().message(),
              HasSubstr("params must be at least 1 dimensional"));
  y = ops::GatherV2(P({3, 2}), ids, 2);
  EXPECT_THAT(y.status().message(),
              HasSubstr("Expected axis in the range [-2, 2), but got 2"));
  y = ops::GatherV2(P({3, 2}), P({2}), 0);
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GatherOpsTest, GatherV2GradientMatchesCentralDifferences) {
  Output params = P({4, 3});
  Output y =
      ops::GatherV2(params, C(I32({2, 3}, {3, 0, 3, 1, 1, 3})), 0).value();
  ExpectGradientMatches(y, {{params, RandomTensor({4, 3}, 1)}}, 0);
}

TEST_F(GatherOpsTest, GatherV2GradientSumsRepeatedRowsIntoParams) {
  Output params = P({3, 1});
  Output y = ops::GatherV2(params, C(I32({3}, {2, 2, 0})), 0).value();
  Output loss = ops::Sum(y).value();
  std::vector<Output> grads = AddGradients(loss, {params}).value();
  EXPECT_EQ(grads[0].shape(), (TensorShape{3, 1}));
  EXPECT_THAT(
      Values(run_.Run1(grads[0], {{params, F({3, 1}, {1, 2, 3})}}).value()),
      ElementsAre(1, 0, 2));
}

TEST_F(GatherOpsTest, UnsortedSegmentSumAddsRowsIntoTheirSegments) {
  Output data = C(F({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  Output y =
      ops::UnsortedSegmentSum(data, C(I32({4}, {2, 0, 2, -1})), 3).value();
  EXPECT_EQ(y.shape(), (TensorShape{3, 2}));
  // The row of id -1 is dropped; segment 1 gets none.
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(3, 4, 0, 0, 6, 8));
}

TEST_F(GatherOpsTest, UnsortedSegmentSumRefusesAnIdPastTheSegments) {
  Output ids = P({3}, DT_INT32);
  Output data = P({3});
  Output z = ops::UnsortedSegmentSum(data, ids, 2, {.name = "seg2"}).value();
  absl::StatusOr<Tensor> r =
      run_.Run1(z, {{ids, I32({3}, {0, 1, 5})}, {data, F({3}, {1, 2, 3})}});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("UnsortedSegmentSum 'seg2'"));
  EXPECT_THAT(r.status().message(),
              HasSubstr("segment_ids[2] = 5 is out of range [0, 2)"));
}

TEST_F(GatherOpsTest, UnsortedSegmentSumRefusesIdsThatDoNotPrefixData) {
  absl::StatusOr<Output> y =
      ops::UnsortedSegmentSum(P({3, 2}), P({2}, DT_INT32), 4);
  EXPECT_THAT(y.status().message(),
              HasSubstr("data.shape = [3,2] does not start with "
                        "segment_ids.shape = [2]"));
  y = ops::UnsortedSegmentSum(P({3}), P({3}, DT_INT32), -1);
  EXPECT_THAT(y.status().message(),
              HasSubstr("num_segments == -1 must not be negative"));
}

TEST_F(GatherOpsTest, UnsortedSegmentSumGradientMatchesCentralDifferences) {
  Output data = P({3, 2});
  Output y = ops::UnsortedSegmentSum(data, C(I32({3}, {1, 0, 1})), 2).value();
  ExpectGradientMatches(y, {{data, RandomTensor({3, 2}, 2)}}, 0);
}

}  // namespace
}  // namespace graphgc
