#include "runtime/plan.h"

#include <memory>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/executor.h"
#include "runtime/graph.h"
#include "runtime/plan_builder.h"
#include "tests/runtime/executor_fixture.h"
#include "tests/runtime/test_ops.h"
#include "util/mutex.h"

namespace graphgc {
namespace exec {
namespace {

class PlanTest : public ExecutorFixture {
 protected:
  std::shared_ptr<const Plan> Build(const std::vector<Output>& fetches) {
    return BuildPlan(g_, executor_.device(), {}, fetches, {}).value();
  }
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
  EXPECT_FALSE(g_.AllLiveForTesting(plan->ids));
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

int64_t StructureVersion(const Graph& g) {
  ReaderLock l(g.heap().mu());
  return g.heap().structure_version();
}

TEST_F(PlanTest, APlanIsStampedWithTheStructureItWasBuiltFrom) {
  Output a = ops_.Scalar(g_, 2).value();
  Output sq = ops_.Square(a, "sq").value();
  std::shared_ptr<const Plan> plan = Build({sq});
  EXPECT_EQ(plan->current_as_of.load(), StructureVersion(g_));
  EXPECT_EQ(plan->edge_counts, (std::vector<uint32_t>{0, 1}));
}

// While the heap's structure is the one the plan was last found current
// at, the stamp is the whole check: a plan naming an id that was never
// live (a wrong generation, which no sweep can cause without changing the
// structure) still pins. A stale stamp makes Pin check every id.
TEST_F(PlanTest, PinChecksNoNodeWhileTheStampIsCurrent) {
  Output a = ops_.Scalar(g_, 2).value();
  auto plan = std::make_shared<Plan>();
  plan->ids = {NodeId{a.handle().id().index, a.handle().id().generation + 1}};
  plan->edge_counts = {0};
  plan->current_as_of.store(StructureVersion(g_));
  EXPECT_TRUE(PinnedRun::Pin(g_, plan).ok());
}

TEST_F(PlanTest, PinChecksEveryNodeOnceTheStampIsStale) {
  Output a = ops_.Scalar(g_, 2).value();
  auto plan = std::make_shared<Plan>();
  plan->ids = {NodeId{a.handle().id().index, a.handle().id().generation + 1}};
  plan->edge_counts = {0};
  plan->current_as_of.store(StructureVersion(g_) - 1);
  EXPECT_EQ(PinnedRun::Pin(g_, plan).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(PlanTest, APlanSurvivesASweepOfNodesItDoesNotName) {
  Output a = ops_.Scalar(g_, 2).value();
  Output sq = ops_.Square(a, "sq").value();
  std::shared_ptr<const Plan> plan = Build({sq});
  { ops_.Identity(sq).value(); }  // garbage reading the plan's node
  EXPECT_EQ(g_.Collect().swept, 1);
  ASSERT_NE(plan->current_as_of.load(), StructureVersion(g_));
  EXPECT_TRUE(PinnedRun::Pin(g_, plan).ok());
  // Checked once: the next pin needs only the stamp.
  EXPECT_EQ(plan->current_as_of.load(), StructureVersion(g_));
}

TEST_F(PlanTest, PinRefusesAPlanWhoseNodeGainedAnInput) {
  Output a = ops_.Scalar(g_, 2).value();
  Output sq = ops_.Square(a, "sq").value();
  Output other = ops_.Scalar(g_, 3).value();
  std::shared_ptr<const Plan> plan = Build({sq});
  ASSERT_TRUE(g_.AddControlEdge(other.handle(), sq.handle()).ok());
  absl::Status s = PinnedRun::Pin(g_, plan).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(g_.heap().pin_count(), 0u);
}

TEST_F(PlanTest, AnEdgeBetweenNodesOutsideThePlanLeavesItCurrent) {
  Output a = ops_.Scalar(g_, 2).value();
  Output sq = ops_.Square(a, "sq").value();
  Output b = ops_.Scalar(g_, 3).value();
  Output c = ops_.Identity(b).value();
  std::shared_ptr<const Plan> plan = Build({sq});
  ASSERT_TRUE(g_.AddControlEdge(b.handle(), c.handle()).ok());
  EXPECT_TRUE(PinnedRun::Pin(g_, plan).ok());
}

}  // namespace
}  // namespace exec
}  // namespace graphgc
