#include "runtime/gradient_walk.h"

#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "tests/runtime/test_ops.h"

namespace graphgc {
namespace {

using testing::Values;
using testing::Vec;

class GradientsTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::vector<Output>> Grads(
      const Output& y, const std::vector<Output>& xs,
      const std::optional<Output>& grad_y = std::nullopt) {
    return AddGradientsWith(ops_.gradient_builders(), y, xs, grad_y);
  }
  std::vector<float> Eval(const Output& o) {
    Session s(g_);
    return Values(s.Run({}, {o}).value()[0]);
  }
  // Live nodes once garbage is gone.
  int64_t LiveAfterCollect() {
    g_.Collect();
    return g_.num_nodes();
  }

  testing::TestOps ops_;  // before g_: nodes point at its OpDefs
  Graph g_;
};

TEST_F(GradientsTest, DifferentiatesSumOfSquares) {
  Output x = ops_.Const(g_, Vec({1, 2, 3}), "x").value();
  Output y = ops_.Sum(ops_.Square(x).value(), "loss").value();
  std::vector<Output> g = Grads(y, {x}).value();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{2, 4, 6}));
}

TEST_F(GradientsTest, SumsFanOutWithAddN) {
  Output x = ops_.Const(g_, Vec({1, 2}), "x").value();
  Output a = ops_.Identity(x).value();
  Output b = ops_.Identity(x).value();
  Output y = ops_.Sum(ops_.Add(a, b).value()).value();
  std::vector<Output> g = Grads(y, {x}).value();
  EXPECT_EQ(g[0].op(), "AddN");
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{2, 2}));
  EXPECT_EQ(ops_.runs("AddN"), 1);
}

TEST_F(GradientsTest, SkipsPathsThatReachNoX) {
  Output x = ops_.Const(g_, Vec({1, 2}), "x").value();
  Output c = ops_.Const(g_, Vec({5, 6}), "c").value();
  Output y =
      ops_.Sum(ops_.Add(ops_.Square(x).value(), ops_.Square(c).value()).value())
          .value();
  const int64_t before = LiveAfterCollect();
  std::vector<Output> g = Grads(y, {x}).value();
  // OnesLike seed, BroadcastLike (Sum), Add + Mul (Square of x); none for
  // Square(c), whose branch reaches no x.
  EXPECT_EQ(LiveAfterCollect() - before, 4);
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{2, 4}));
}

TEST_F(GradientsTest, RefusesNonDifferentiableOpOnThePath) {
  Output w = ops_.Const(g_, Vec({1, 2}), "w").value();
  Output am = ops_.Unary("ArgMaxish", w, "argmax_1").value();
  Output loss = ops_.Sum(am, "loss").value();
  const int64_t before = LiveAfterCollect();
  absl::StatusOr<std::vector<Output>> g = Grads(loss, {w});
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(),
            "AddGradients: no gradient for ArgMaxish 'argmax_1' on the path "
            "from 'loss' to 'w'");
  EXPECT_EQ(LiveAfterCollect(), before);
}

TEST_F(GradientsTest, AcceptsNonDifferentiableOpOffThePath) {
  Output x = ops_.Const(g_, Vec({1, 2}), "x").value();
  Output c = ops_.Const(g_, Vec({5, 6}), "c").value();
  Output am = ops_.Unary("ArgMaxish", c).value();
  Output y = ops_.Sum(ops_.Add(ops_.Square(x).value(), am).value()).value();
  std::vector<Output> g = Grads(y, {x}).value();
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{2, 4}));
}

TEST_F(GradientsTest, AcceptsNonDifferentiableOpNoGradientReaches) {
  Output x = ops_.Const(g_, Vec({1, 2}), "x").value();
  Output am = ops_.Unary("ArgMaxish", x).value();         // on a path, but Pick
  Output y = ops_.Sum(ops_.Pick(x, am).value()).value();  // gives it none
  std::vector<Output> g = Grads(y, {x}).value();
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{1, 1}));
}

TEST_F(GradientsTest, GivesZerosForAnXThatDoesNotInfluenceY) {
  Output x = ops_.Const(g_, Vec({1, 2}), "x").value();
  Output other = ops_.Const(g_, Vec({3, 4, 5}), "other").value();
  Output y = ops_.Sum(ops_.Square(x).value()).value();
  std::vector<Output> g = Grads(y, {x, other}).value();
  EXPECT_EQ(g[1].op(), "ZerosLike");
  EXPECT_EQ(Eval(g[1]), (std::vector<float>{0, 0, 0}));
}

TEST_F(GradientsTest, FailureMidwayLeavesGraphUnchanged) {
  Output x = ops_.Const(g_, Vec({1, 2}), "x").value();
  Output y =
      ops_.Sum(ops_.Add(ops_.Identity(x).value(), ops_.Identity(x).value())
                   .value())
          .value();
  GradientBuilders builders = ops_.gradient_builders();
  builders.add_n = [](const std::vector<Output>&) -> absl::StatusOr<Output> {
    return absl::InternalError("AddN refused");
  };
  const int64_t before = LiveAfterCollect();
  absl::StatusOr<std::vector<Output>> g = AddGradientsWith(builders, y, {x});
  EXPECT_EQ(g.status().message(), "AddN refused");
  EXPECT_EQ(LiveAfterCollect(), before);  // the seed and others are gone
}

TEST_F(GradientsTest, UsesGivenGradYAsSeed) {
  Output x = ops_.Const(g_, Vec({1, 2}), "x").value();
  Output y = ops_.Square(x).value();
  Output dy = ops_.Const(g_, Vec({10, 100})).value();
  std::vector<Output> g = Grads(y, {x}, dy).value();
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{20, 400}));
}

TEST_F(GradientsTest, DifferentiatesThroughAnotherX) {
  Output x1 = ops_.Const(g_, Vec({3}), "x1").value();
  Output x2 = ops_.Square(x1, "x2").value();
  Output y = ops_.Sum(ops_.Mul(x2, x2).value()).value();  // x1^4
  std::vector<Output> g = Grads(y, {x1, x2}).value();
  EXPECT_EQ(Eval(g[1]), (std::vector<float>{18}));   // 2 x2
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{108}));  // 4 x1^3
}

TEST_F(GradientsTest, GradientOfYWithRespectToItselfIsTheSeed) {
  Output x = ops_.Const(g_, Vec({1, 2}), "x").value();
  Output y = ops_.Square(x).value();
  std::vector<Output> g = Grads(y, {y}).value();
  EXPECT_EQ(Eval(g[0]), (std::vector<float>{1, 1}));
}

TEST_F(GradientsTest, RefusesEmptyYAndForeignX) {
  Graph other;
  Output foreign = ops_.Const(other, Vec({1})).value();
  Output x = ops_.Const(g_, Vec({1})).value();
  EXPECT_EQ(Grads(Output(), {x}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<Output>> g = Grads(x, {foreign});
  EXPECT_TRUE(absl::StrContains(g.status().message(), "another graph"))
      << g.status();
}

}  // namespace
}  // namespace graphgc
