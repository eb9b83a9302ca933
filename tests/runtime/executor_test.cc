#include "runtime/executor.h"

#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/plan.h"
#include "runtime/plan_builder.h"
#include "tests/runtime/executor_fixture.h"
#include "tests/runtime/test_ops.h"
#include "unsupported/Eigen/CXX11/Tensor"
#include "unsupported/Eigen/CXX11/ThreadPool"
#include "util/float_mode.h"

namespace graphgc {
namespace exec {
namespace {

using testing::Values;
using testing::Vec;

class ExecutorTest : public ExecutorFixture {
 protected:
  PinnedRun Pinned(const Feeds& feeds, const std::vector<Output>& fetches) {
    std::shared_ptr<const Plan> plan =
        BuildPlan(g_, executor_.device(), feeds, fetches, {}).value();
    return PinnedRun::Pin(g_, std::move(plan)).value();
  }
};

TEST_F(ExecutorTest, RunsThePlansStepsAndReturnsTheFetches) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  Output sum = ops_.Add(sq, x).value();
  const Feeds feeds = {{x, Vec({1, 2})}};
  PinnedRun run = Pinned(feeds, {sum, sq});
  std::vector<Tensor> out = executor_.Run(run, feeds).value();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Values(out[0]), (std::vector<float>{2, 6}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{1, 4}));
}

TEST_F(ExecutorTest, RunsOnePinnedPlanAgainWithOtherFeeds) {
  Output x = ops_.Placeholder(g_, TensorShape({1}), "x").value();
  Output sq = ops_.Square(x).value();
  PinnedRun run = Pinned({{x, Vec({3})}}, {sq});
  EXPECT_EQ(Values(executor_.Run(run, {{x, Vec({3})}}).value()[0]),
            (std::vector<float>{9}));
  EXPECT_EQ(Values(executor_.Run(run, {{x, Vec({4})}}).value()[0]),
            (std::vector<float>{16}));
  EXPECT_EQ(ops_.runs("Square"), 2);
}

TEST_F(ExecutorTest, RefusesAFeedOfAnotherShapeNamingIt) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  PinnedRun run = Pinned({{x, Vec({1, 2})}}, {sq});
  absl::Status s = executor_.Run(run, {{x, Vec({1, 2, 3})}}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "feed 'x:0' has shape")) << s;
  EXPECT_EQ(ops_.runs("Square"), 0);
}

TEST_F(ExecutorTest, StopsAtAFailingKernelWithItsStatus) {
  Output x = ops_.Placeholder(g_, TensorShape({1}), "x").value();
  Output bad = ops_.Unary("Fail", x, "bad").value();
  Output after = ops_.Square(bad).value();
  const Feeds feeds = {{x, Vec({1})}};
  absl::Status s = executor_.Run(Pinned(feeds, {after}), feeds).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'bad'")) << s;
  EXPECT_EQ(ops_.runs("Square"), 0);
}

// Products the compiler cannot fold: the operands are read at run time.
float Product(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x * y;
}

constexpr float kTiny = 1e-20f;  // kTiny * kTiny = 1e-40, a denormal

TEST_F(ExecutorTest, AKernelsDenormalResultIsZeroAsInTensorFlow) {
  if (!ScopedFlushDenormals::kFlushesDenormals) GTEST_SKIP();
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  const Feeds feeds = {{x, Vec({kTiny, 2})}};
  PinnedRun run = Pinned(feeds, {sq});
  EXPECT_EQ(Values(executor_.Run(run, feeds).value()[0]),
            (std::vector<float>{0, 4}));
}

TEST_F(ExecutorTest, ADenormalFeedReadsAsZeroInAKernel) {
  if (!ScopedFlushDenormals::kFlushesDenormals) GTEST_SKIP();
  const float denormal = Product(kTiny, kTiny);
  ASSERT_GT(denormal, 0.f);
  Output x = ops_.Placeholder(g_, TensorShape({1}), "x").value();
  Output big = ops_.Placeholder(g_, TensorShape({1}), "big").value();
  Output product = ops_.Mul(x, big).value();
  const Feeds feeds = {{x, Vec({denormal})}, {big, Vec({1e30f})}};
  PinnedRun run = Pinned(feeds, {product});
  EXPECT_EQ(Values(executor_.Run(run, feeds).value()[0]),
            (std::vector<float>{0}));
}

TEST_F(ExecutorTest, TheCallersFloatingPointModeIsBackAfterARun) {
  Output x = ops_.Placeholder(g_, TensorShape({1}), "x").value();
  Output sq = ops_.Square(x).value();
  const Feeds feeds = {{x, Vec({kTiny})}};
  PinnedRun run = Pinned(feeds, {sq});
  ASSERT_TRUE(executor_.Run(run, feeds).ok());
  EXPECT_GT(Product(kTiny, kTiny), 0.f);
}

TEST(ExecutorThreads, TheIntraOpThreadsFlushDenormalsToo) {
  if (!ScopedFlushDenormals::kFlushesDenormals) GTEST_SKIP();
  Executor executor(2);
  Eigen::Barrier done(1);
  float on_pool = -1;
  executor.device()->enqueueNoNotification([&] {
    on_pool = Product(kTiny, kTiny);
    done.Notify();
  });
  done.Wait();
  EXPECT_EQ(on_pool, 0.f);
}

}  // namespace
}  // namespace exec
}  // namespace graphgc
