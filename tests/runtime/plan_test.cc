#include "runtime/plan.h"

#include <memory>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/executor.h"
#include "runtime/graph.h"
#include "runtime/plan_builder.h"
#include "tests/runtime/test_ops.h"

namespace graphgc {
namespace exec {
namespace {

class PlanTest : public ::testing::Test {
 protected:
  std::shared_ptr<const Plan> Build(const std::vector<Output>& fetches) {
    return BuildPlan(g_, executor_.device(), {}, fetches, {}).value();
  }

  testing::TestOps ops_;  // before g_: nodes point at its OpDefs
  Graph g_;
  Executor executor_{1};
};

TEST_F(PlanTest, APlanKeepsNoNodeAlive) {
  std::optional<Output> sq;
  {
    Output a = ops_.Scalar(g_, 2).value();
    sq = ops_.Square(a, "sq").value();
  }
  std::shared_ptr<const Plan> plan = Build({*sq});
  sq.reset();
  EXPECT_EQ(g_.Collect().swept, 2);
  EXPECT_FALSE(g_.AllLive(plan->ids));
}

TEST_F(PlanTest, PinnedRunHandsOutEachStepsNode) {
  Output a = ops_.Scalar(g_, 2).value();
  Output sq = ops_.Square(a, "sq").value();
  PinnedRun run = PinnedRun::Pin(g_, Build({sq})).value();
  ASSERT_EQ(run.plan().steps.size(), 2u);
  EXPECT_EQ(run.node(1).name, "sq");
}

TEST_F(PlanTest, PinnedRunKeepsThePlansNodesThroughACollection) {
  std::optional<Output> sq;
  {
    Output a = ops_.Scalar(g_, 2).value();
    sq = ops_.Square(a, "sq").value();
  }
  PinnedRun run = PinnedRun::Pin(g_, Build({*sq})).value();
  sq.reset();
  EXPECT_EQ(g_.Collect().swept, 0);
  EXPECT_EQ(run.node(1).name, "sq");
}

TEST_F(PlanTest, PinRefusesAPlanWhoseNodeWasSwept) {
  std::optional<Output> sq;
  {
    Output a = ops_.Scalar(g_, 2).value();
    sq = ops_.Square(a, "sq").value();
  }
  std::shared_ptr<const Plan> plan = Build({*sq});
  sq.reset();
  g_.Collect();
  EXPECT_EQ(PinnedRun::Pin(g_, plan).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace exec
}  // namespace graphgc
