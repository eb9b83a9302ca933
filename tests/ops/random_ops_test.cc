#include "ops/random_ops.h"

#include <cmath>

#include "gtest/gtest.h"
#include "ops/ops.h"
#include "tests/ops/kernel_test_util.h"

namespace graphgc {
namespace {

using testing::KernelRunner;
using testing::Values;

class RandomOpsTest : public ::testing::Test {
 protected:
  Graph g_;
  KernelRunner run_;
};

TEST_F(RandomOpsTest, FixedSeedGivesSameSequenceInTwoNodes) {
  Output a = ops::RandomUniform(g_, {5}, {.seed = 1, .seed2 = 2}).value();
  Output b = ops::RandomUniform(g_, {5}, {.seed = 1, .seed2 = 2}).value();
  std::vector<float> a1 = Values(run_.Run1(a).value());
  std::vector<float> a2 = Values(run_.Run1(a).value());
  std::vector<float> b1 = Values(run_.Run1(b).value());
  std::vector<float> b2 = Values(run_.Run1(b).value());
  EXPECT_EQ(a1, b1);
  EXPECT_EQ(a2, b2);
  EXPECT_NE(a1, a2);  // repeated runs draw new numbers
}

TEST_F(RandomOpsTest, DifferentSeedsDiffer) {
  Output a = ops::RandomUniform(g_, {5}, {.seed = 1}).value();
  Output b = ops::RandomUniform(g_, {5}, {.seed = 2}).value();
  EXPECT_NE(Values(run_.Run1(a).value()), Values(run_.Run1(b).value()));
}

TEST_F(RandomOpsTest, UniformInUnitInterval) {
  Output a = ops::RandomUniform(g_, {1000}, {.seed = 3}).value();
  EXPECT_EQ(a.shape(), TensorShape{1000});
  double sum = 0;
  for (float v : Values(run_.Run1(a).value())) {
    EXPECT_GE(v, 0.f);
    EXPECT_LT(v, 1.f);
    sum += v;
  }
  EXPECT_NEAR(sum / 1000, 0.5, 0.05);
}

TEST_F(RandomOpsTest, NormalHasZeroMeanUnitVariance) {
  Output a = ops::RandomStandardNormal(g_, {4001}, {.seed = 4}).value();
  std::vector<float> v = Values(run_.Run1(a).value());
  double s = 0, s2 = 0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x));
    s += x;
    s2 += x * x;
  }
  const double mean = s / v.size();
  EXPECT_NEAR(mean, 0, 0.06);
  EXPECT_NEAR(s2 / v.size() - mean * mean, 1, 0.08);
}

TEST_F(RandomOpsTest, NegativeShapeIsBuildErrorWithNoNodeLeft) {
  const int64_t before = g_.num_nodes();
  absl::StatusOr<Output> a = ops::RandomUniform(g_, {-1, 2});
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g_.num_nodes(), before);
}

TEST_F(RandomOpsTest, RandomOpsAreStatefulWithoutGradient) {
  for (const char* op : {"RandomUniform", "RandomStandardNormal"}) {
    const RegisteredOp* r = GlobalOpRegistry().Lookup(op).value();
    EXPECT_TRUE(r->def.stateful) << op;
    EXPECT_FALSE(r->def.gradient) << op;
  }
}

}  // namespace
}  // namespace graphgc
