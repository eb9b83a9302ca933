#include "runtime/session.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gc/handle.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/intra_op_threads.h"
#include "tests/runtime/test_ops.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace graphgc {
namespace {

// Whether a status message holds `text`, with the message on failure.
::testing::AssertionResult Says(const absl::Status& s, absl::string_view text) {
  if (absl::StrContains(s.message(), text))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "status \"" << s.ToString() << "\" does not say \"" << text << "\"";
}

using testing::Values;
using testing::Vec;

class SessionTest : public ::testing::Test {
 protected:
  testing::TestOps ops_;  // before g_: nodes point at its OpDefs
  Graph g_;
};

TEST_F(SessionTest, RunsFetchedOutputs) {
  Output a = ops_.Const(g_, Vec({1, 2})).value();
  Output b = ops_.Const(g_, Vec({3, 4})).value();
  Output c = ops_.Add(a, b).value();
  Session s(g_);
  std::vector<Tensor> out = s.Run({}, {c, a}).value();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Values(out[0]), (std::vector<float>{4, 6}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{1, 2}));
}

TEST_F(SessionTest, FetchRunsOnlyNodesItNeeds) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  Output mul = ops_.Mul(a, a).value();
  Session s(g_);
  EXPECT_EQ(Values(s.Run({}, {sq}).value()[0]), (std::vector<float>{4}));
  EXPECT_EQ(ops_.runs("Square"), 1);
  EXPECT_EQ(ops_.runs("Mul"), 0);
  EXPECT_EQ(ops_.runs("TestConst"), 1);
}

TEST_F(SessionTest, FedOutputCutsTheGraph) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  Output id = ops_.Identity(sq).value();
  Session s(g_);
  std::vector<Tensor> out = s.Run({{sq, Vec({7})}}, {id, sq}).value();
  EXPECT_EQ(Values(out[0]), (std::vector<float>{7}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{7}));
  EXPECT_EQ(ops_.runs("Square"), 0);
  EXPECT_EQ(ops_.runs("TestConst"), 0);
  EXPECT_EQ(ops_.runs("Identity"), 1);
}

TEST_F(SessionTest, TargetsRunForEffectThroughControlInputs) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  Output noop = ops_.NoOp(g_, {sq.handle()}).value();
  Session s(g_);
  std::vector<Tensor> out = s.Run({}, {}, {noop}).value();
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(ops_.runs("Square"), 1);
}

TEST_F(SessionTest, ControlInputsRunBeforeTheirConsumer) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  Output id = ops_.Unary("Identity", a, "id", {sq.handle()}).value();
  Session s(g_);
  ASSERT_TRUE(s.Run({}, {id}).ok());
  EXPECT_EQ(ops_.runs("Square"), 1);
}

TEST_F(SessionTest, ResourceOutputReachesItsConsumer) {
  Output var = ops_.Var(g_, Vec({5, 6})).value();
  Output read = ops_.Read(var).value();
  Session s(g_);
  std::vector<Tensor> out = s.Run({}, {read, var}).value();
  EXPECT_EQ(Values(out[0]), (std::vector<float>{5, 6}));
  EXPECT_FALSE(out[1].IsInitialized());  // a resource output is empty
}

TEST_F(SessionTest, SecondRunReusesThePlan) {
  Output x = ops_.Placeholder(g_, {-1}).value();
  Output sq = ops_.Square(x).value();
  Session s(g_);
  ASSERT_TRUE(s.Run({{x, Vec({1})}}, {sq}).ok());
  std::vector<Tensor> out = s.Run({{x, Vec({3, 4})}}, {sq}).value();
  EXPECT_EQ(Values(out[0]), (std::vector<float>{9, 16}));
  EXPECT_EQ(s.PlanBuildsForTesting(), 1);
  EXPECT_EQ(s.CachedPlansForTesting(), 1u);
}

TEST_F(SessionTest, DifferentFetchesBuildDifferentPlans) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  Session s(g_);
  ASSERT_TRUE(s.Run({}, {sq}).ok());
  ASSERT_TRUE(s.Run({}, {a}).ok());
  ASSERT_TRUE(s.Run({}, {sq, a}).ok());
  EXPECT_EQ(s.PlanBuildsForTesting(), 3);
  EXPECT_EQ(s.CachedPlansForTesting(), 3u);
}

TEST_F(SessionTest, CachedPlanKeepsNoNodeAlive) {
  Session s(g_);
  {
    Output a = ops_.Const(g_, Vec({2})).value();
    Output sq = ops_.Square(a).value();
    ASSERT_TRUE(s.Run({}, {sq}).ok());
  }
  EXPECT_EQ(g_.Collect().swept, 2);
  EXPECT_EQ(g_.num_nodes(), 0);
}

TEST_F(SessionTest, SweepDropsEveryPlanNamingASweptNode) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  Session s(g_);
  {
    Output id = ops_.Identity(sq).value();
    ASSERT_TRUE(s.Run({}, {id}).ok());
  }
  ASSERT_TRUE(s.Run({}, {sq}).ok());
  ASSERT_EQ(s.CachedPlansForTesting(), 2u);
  EXPECT_EQ(g_.Collect().swept, 1);  // the Identity
  EXPECT_EQ(s.CachedPlansForTesting(), 1u);
  // The surviving plan still runs, without being rebuilt.
  EXPECT_EQ(Values(s.Run({}, {sq}).value()[0]), (std::vector<float>{4}));
  EXPECT_EQ(s.PlanBuildsForTesting(), 2);
}

TEST_F(SessionTest, MinorCollectionDropsThePlansNamingTheSweptNodes) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  g_.Collect();
  g_.Collect();  // a and sq are old now
  Session s(g_);
  ASSERT_TRUE(s.Run({}, {sq}).ok());
  {
    Output id = ops_.Identity(sq).value();
    ASSERT_TRUE(s.Run({}, {id}).ok());
  }
  ASSERT_EQ(s.CachedPlansForTesting(), 2u);
  EXPECT_EQ(g_.collector().CollectYoung().swept, 1);  // the Identity
  EXPECT_EQ(s.CachedPlansForTesting(), 1u);
  EXPECT_EQ(Values(s.Run({}, {sq}).value()[0]), (std::vector<float>{4}));
  EXPECT_EQ(s.PlanBuildsForTesting(), 2);
}

TEST_F(SessionTest, SweepOfUnrelatedNodesKeepsEveryPlan) {
  Output a = ops_.Const(g_, Vec({3})).value();
  Output sq = ops_.Square(a).value();
  Session s(g_);
  ASSERT_TRUE(s.Run({}, {sq}).ok());
  { ops_.Const(g_, Vec({1})).value(); }  // garbage no plan names
  EXPECT_EQ(g_.Collect().swept, 1);
  EXPECT_EQ(s.CachedPlansForTesting(), 1u);
  EXPECT_EQ(Values(s.Run({}, {sq}).value()[0]), (std::vector<float>{9}));
  EXPECT_EQ(s.PlanBuildsForTesting(), 1);
}

TEST_F(SessionTest, ControlEdgeAddedAfterCachingIsHonoured) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  Output id = ops_.Identity(a).value();
  Session s(g_);
  ASSERT_TRUE(s.Run({}, {id}).ok());
  EXPECT_EQ(ops_.runs("Square"), 0);
  ASSERT_TRUE(g_.AddControlEdge(sq.handle(), id.handle()).ok());
  ASSERT_TRUE(s.Run({}, {id}).ok());
  EXPECT_EQ(ops_.runs("Square"), 1);
}

TEST_F(SessionTest, APlanIsRebuiltOnceAfterOneOfItsNodesGainsAnInput) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  Output id = ops_.Identity(a).value();
  Session s(g_);
  ASSERT_TRUE(s.Run({}, {id}).ok());
  ASSERT_TRUE(g_.AddControlEdge(sq.handle(), id.handle()).ok());
  ASSERT_TRUE(s.Run({}, {id}).ok());
  ASSERT_TRUE(s.Run({}, {id}).ok());
  EXPECT_EQ(s.PlanBuildsForTesting(), 2);
  EXPECT_EQ(s.CachedPlansForTesting(), 1u);
}

TEST_F(SessionTest, AnEdgeAddedOutsideAPlanKeepsIt) {
  Output a = ops_.Const(g_, Vec({2})).value();
  Output sq = ops_.Square(a).value();
  Output b = ops_.Const(g_, Vec({3})).value();
  Output c = ops_.Identity(b).value();
  Session s(g_);
  ASSERT_TRUE(s.Run({}, {sq}).ok());
  ASSERT_TRUE(g_.AddControlEdge(b.handle(), c.handle()).ok());
  EXPECT_EQ(Values(s.Run({}, {sq}).value()[0]), (std::vector<float>{4}));
  EXPECT_EQ(s.PlanBuildsForTesting(), 1);
}

TEST_F(SessionTest, RunsSurviveConcurrentSweepsAndAddedEdges) {
  Output x = ops_.Placeholder(g_, {-1}).value();
  Output sq = ops_.Square(x).value();
  Output y = ops_.Add(sq, x).value();
  Session s(g_);
  ASSERT_TRUE(s.Run({{x, Vec({1})}}, {y}).ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const float v = static_cast<float>(t * 1000 + i);
        auto out = s.Run({{x, Vec({v})}}, {y});
        if (!out.ok() || Values((*out)[0])[0] != v * v + v) ++failures;
      }
    });
  }
  // Garbage that reads the plan's nodes, swept by full and minor
  // collections, and edges added to nodes outside the plan meanwhile.
  threads.emplace_back([&] {
    for (int i = 0; i < 50; ++i) {
      {
        Output junk = ops_.Identity(y).value();
        Output more = ops_.Identity(junk).value();
        ASSERT_TRUE(g_.AddControlEdge(junk.handle(), more.handle()).ok());
      }
      if (i % 2) {
        g_.Collect();
      } else {
        g_.collector().CollectYoung();
      }
    }
  });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(s.PlanBuildsForTesting(), 1);
  EXPECT_EQ(g_.heap().pin_count(), 0u);
}

TEST_F(SessionTest, ConcurrentCollectCannotSweepPinnedNodes) {
  Output a = ops_.Const(g_, Vec({3})).value();
  Output blocked = ops_.Unary("Block", a, "blocked").value();
  Output out = ops_.Identity(blocked).value();
  Session s(g_);
  const NodeId ids[] = {a.handle().id(), blocked.handle().id(),
                        out.handle().id()};
  absl::StatusOr<std::vector<Tensor>> result;
  std::thread runner(
      [&s, &result, fetch = out] { result = s.Run({}, {fetch}); });
  ops_.WaitBlocked();
  for (NodeId id : ids) EXPECT_TRUE(g_.heap().IsPinned(id.index));
  // Drop every handle this thread has and collect while the kernel runs:
  // the collection must neither wait for the kernel nor sweep the plan.
  a = Output();
  blocked = Output();
  out = Output();
  EXPECT_EQ(g_.Collect().swept, 0);
  EXPECT_EQ(g_.num_nodes(), 3);
  ops_.Release();
  runner.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Values((*result)[0]), (std::vector<float>{3}));
  for (NodeId id : ids) EXPECT_FALSE(g_.heap().IsPinned(id.index));
  // With the run over and its fetch dropped, nothing holds the nodes.
  EXPECT_EQ(g_.Collect().swept, 3);
  EXPECT_EQ(s.CachedPlansForTesting(), 0u);
}

TEST_F(SessionTest, UnfedPlaceholderIsAnError) {
  Output x = ops_.Placeholder(g_, {-1}, "x").value();
  Output sq = ops_.Square(x).value();
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r = s.Run({}, {sq});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Says(r.status(), "Placeholder 'x' must be fed"));
  EXPECT_EQ(ops_.runs("Square"), 0);
}

TEST_F(SessionTest, FeedOfWrongDtypeIsAnError) {
  Output x = ops_.Placeholder(g_, {-1}, "x").value();
  Output sq = ops_.Square(x).value();
  Session s(g_);
  Tensor ints = Tensor::FromData<int32_t>({1}, std::vector<int32_t>{1}).value();
  absl::StatusOr<std::vector<Tensor>> r = s.Run({{x, ints}}, {sq});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Says(r.status(), "feed 'x:0' expects a float"));
  EXPECT_TRUE(Says(r.status(), "got int32"));
}

TEST_F(SessionTest, FeedOfIncompatibleShapeIsAnError) {
  Output x = ops_.Placeholder(g_, {-1, 3}, "x").value();
  Output id = ops_.Identity(x).value();
  Session s(g_);
  Tensor bad = Tensor::FromData<float>({2, 4}, std::vector<float>(8)).value();
  absl::StatusOr<std::vector<Tensor>> r = s.Run({{x, bad}}, {id});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Says(r.status(), "feed 'x:0' has shape [2,4]"));
  EXPECT_TRUE(Says(r.status(), "[?,3]"));
  Tensor good = Tensor::FromData<float>({5, 3}, std::vector<float>(15)).value();
  EXPECT_TRUE(s.Run({{x, good}}, {id}).ok());
}

TEST_F(SessionTest, FeedingAnOutputTwiceIsAnError) {
  Output x = ops_.Placeholder(g_, {-1}, "x").value();
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r =
      s.Run({{x, Vec({1})}, {x, Vec({2})}}, {x});
  EXPECT_TRUE(Says(r.status(), "'x:0' is fed twice"));
}

TEST_F(SessionTest, FetchOfAnotherGraphIsAnError) {
  Graph other;
  Output foreign = ops_.Const(other, Vec({1})).value();
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r = s.Run({}, {foreign});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Says(r.status(), "fetch 0 belongs to another"));
}

TEST_F(SessionTest, EmptyFetchIsAnError) {
  Output a = ops_.Const(g_, Vec({1})).value();
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r = s.Run({}, {a, Output()});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Says(r.status(), "fetch 1 is an empty Output"));
}

TEST_F(SessionTest, FetchOfSweptNodeIsAnError) {
  WeakNodeHandle weak;
  {
    Output a = ops_.Const(g_, Vec({1})).value();
    weak = WeakNodeHandle(a.handle());
  }
  g_.Collect();
  std::optional<NodeHandle> locked = weak.Lock();
  ASSERT_FALSE(locked.has_value());
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r =
      s.Run({}, {Output(locked.value_or(NodeHandle()), 0)});
  EXPECT_TRUE(Says(r.status(), "fetch 0 is an empty Output"));
}

TEST_F(SessionTest, FetchOfMissingOutputIndexIsAnError) {
  Output a = ops_.Const(g_, Vec({1}), "a").value();
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r = s.Run({}, {Output(a.handle(), 2)});
  EXPECT_TRUE(Says(r.status(), "fetch 0 reads output 2 of TestConst 'a'"));
}

TEST_F(SessionTest, KernelErrorIsReturned) {
  Output a = ops_.Const(g_, Vec({1})).value();
  Output f = ops_.Unary("Fail", a, "bad").value();
  Output after = ops_.Identity(f).value();
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r = s.Run({}, {after});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "Fail 'bad': fails on purpose");
  EXPECT_EQ(ops_.runs("Identity"), 0);
}

TEST_F(SessionTest, KernelErrorWithoutNodeNameGetsOne) {
  OpDef def{.type = "Bare", .kernel = [](OpKernelContext&) {
              return absl::OutOfRangeError("index 7 out of range");
            }};
  NodeSpec spec;
  spec.op = "Bare";
  spec.op_def = &def;
  spec.name = "bare";
  NodeHandle bare = g_.AddNode(std::move(spec)).value();
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r = s.Run({}, {}, {Output(bare, 0)});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(r.status().message(), "Bare 'bare': index 7 out of range");
}

TEST_F(SessionTest, KernelOutputOfWrongDtypeIsAnError) {
  Output a = ops_.Const(g_, Vec({1})).value();
  Output w = ops_.Unary("Wrong", a, "wrong").value();
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r = s.Run({}, {w});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(Says(r.status(),
                   "Wrong 'wrong': kernel produced "
                   "output 0 as int32"));
}

// A node of a one-output op with `def`, float [1].
NodeHandle SourceNode(Graph& g, const OpDef* def, const std::string& name) {
  NodeSpec spec;
  spec.op = def->type;
  spec.op_def = def;
  spec.name = name;
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {TensorShape{1}};
  return g.AddNode(std::move(spec)).value();
}

// A constant op (Dispatch::kConstant) giving float [7], counting its runs.
OpDef SevenDef(int* runs) {
  return OpDef{.type = "Seven",
               .dispatch = OpDef::Dispatch::kConstant,
               .kernel = [runs](OpKernelContext& ctx) {
                 ++*runs;
                 ctx.set_output(0, Vec({7}));
                 return absl::OkStatus();
               }};
}

TEST_F(SessionTest, ConstantKernelRunsOncePerPlan) {
  int runs = 0;
  OpDef def = SevenDef(&runs);
  Output seven(SourceNode(g_, &def, "seven"), 0);
  Output twice = ops_.Add(seven, seven).value();
  Session s(g_);
  for (int i = 0; i < 3; ++i) {
    std::vector<Tensor> out = s.Run({}, {twice, seven}).value();
    EXPECT_EQ(Values(out[0]), std::vector<float>{14});
    EXPECT_EQ(Values(out[1]), std::vector<float>{7});
  }
  EXPECT_EQ(runs, 1);
}

// A node of `def` reading `inputs`, one float output of `shape`.
NodeHandle ConsumerNode(Graph& g, const OpDef* def, const std::string& name,
                        std::vector<Output> inputs, TensorShape shape) {
  NodeSpec spec;
  spec.op = def->type;
  spec.op_def = def;
  spec.name = name;
  spec.inputs = std::move(inputs);
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {std::move(shape)};
  return g.AddNode(std::move(spec)).value();
}

// A counting op that doubles its input (or, shape-only, gives its size).
OpDef CountingOp(std::string type, int* runs, bool shape_only = false) {
  return OpDef{.type = std::move(type),
               .shape_only = shape_only,
               .kernel = [runs, shape_only](OpKernelContext& ctx) {
                 ++*runs;
                 const Tensor& x = ctx.input(0);
                 std::vector<float> out(x.num_elements());
                 for (size_t i = 0; i < out.size(); ++i) {
                   out[i] = shape_only ? static_cast<float>(out.size())
                                       : 2 * x.data<float>()[i];
                 }
                 ctx.set_output(0, Vec(out));
                 return absl::OkStatus();
               }};
}

TEST_F(SessionTest, StatelessOpOfConstantsIsFoldedOncePerPlan) {
  int seven_runs = 0, twice_runs = 0;
  OpDef seven_def = SevenDef(&seven_runs);
  OpDef twice_def = CountingOp("Twice", &twice_runs);
  Output seven(SourceNode(g_, &seven_def, "seven"), 0);
  Output twice(ConsumerNode(g_, &twice_def, "twice", {seven}, {1}), 0);
  Output sum = ops_.Add(twice, seven).value();
  Session s(g_);
  for (int i = 0; i < 3; ++i) {
    std::vector<Tensor> out = s.Run({}, {sum, twice}).value();
    EXPECT_EQ(Values(out[0]), std::vector<float>{21});
    EXPECT_EQ(Values(out[1]), std::vector<float>{14});
  }
  EXPECT_EQ(seven_runs, 1);
  EXPECT_EQ(twice_runs, 1);
  EXPECT_EQ(ops_.runs("Add"), 1);  // folded in turn: both its inputs are
}

TEST_F(SessionTest, StatefulOpOfConstantsRunsEveryTime) {
  int runs = 0, seven_runs = 0;
  OpDef seven_def = SevenDef(&seven_runs);
  OpDef twice_def = CountingOp("Twice", &runs);
  twice_def.stateful = true;
  Output seven(SourceNode(g_, &seven_def, "seven"), 0);
  Output twice(ConsumerNode(g_, &twice_def, "twice", {seven}, {1}), 0);
  Session s(g_);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(s.Run({}, {twice}).ok());
  EXPECT_EQ(runs, 3);
}

TEST_F(SessionTest, ShapeOnlyOpOfAStaticShapeRunsOncePerPlan) {
  int runs = 0;
  OpDef size_def = CountingOp("SizeLike", &runs, /*shape_only=*/true);
  Output x = ops_.Const(g_, Vec({1, 2, 3})).value();  // static shape [3]
  Output size(ConsumerNode(g_, &size_def, "size", {x}, {3}), 0);
  Output sum = ops_.Add(size, x).value();
  Session s(g_);
  for (int i = 0; i < 3; ++i) {
    std::vector<Tensor> out = s.Run({}, {sum}).value();
    EXPECT_EQ(Values(out[0]), (std::vector<float>{4, 5, 6}));
  }
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(ops_.runs("TestConst"), 3);  // its value is still computed
}

TEST_F(SessionTest, ShapeOnlyOpOfAnUnknownShapeRunsEveryTime) {
  int runs = 0;
  OpDef size_def = CountingOp("SizeLike", &runs, /*shape_only=*/true);
  Output x = ops_.Placeholder(g_, TensorShape{-1}).value();
  Output size(ConsumerNode(g_, &size_def, "size", {x}, {-1}), 0);
  Session s(g_);
  EXPECT_EQ(Values(s.Run({{x, Vec({5, 5})}}, {size}).value()[0]),
            (std::vector<float>{2, 2}));
  EXPECT_EQ(Values(s.Run({{x, Vec({5, 5, 5})}}, {size}).value()[0]),
            (std::vector<float>{3, 3, 3}));
  EXPECT_EQ(runs, 2);
}

// An op that scales its input by its "factor" attribute, read once per
// plan through OpDef::bind; `binds` counts the bindings.
OpDef ScaleDef(int* binds) {
  auto scale = [](OpKernelContext& ctx, float factor) {
    const Tensor& x = ctx.input(0);
    std::vector<float> out(x.num_elements());
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = factor * x.data<float>()[i];
    }
    ctx.set_output(0, Vec(out));
    return absl::OkStatus();
  };
  return OpDef{.type = "Scale",
               .kernel =
                   [scale](OpKernelContext& ctx) {
                     return scale(ctx,
                                  GetAttrOr<float>(ctx.attrs(), "factor", 1));
                   },
               .bind = [binds, scale](const AttrMap& attrs) -> KernelFn {
                 ++*binds;
                 const float factor = GetAttrOr<float>(attrs, "factor", 1);
                 return [scale, factor](OpKernelContext& ctx) {
                   return scale(ctx, factor);
                 };
               }};
}

TEST_F(SessionTest, APlanBindsEachKernelToItsNodesAttributesOnce) {
  int binds = 0;
  OpDef def = ScaleDef(&binds);
  Output x = ops_.Placeholder(g_, TensorShape{2}).value();
  NodeSpec spec;
  spec.op = def.type;
  spec.op_def = &def;
  spec.name = "triple";
  spec.inputs = {x};
  spec.attrs["factor"] = AttrValue(3.0f);
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {TensorShape{2}};
  Output triple(g_.AddNode(std::move(spec)).value(), 0);
  Session s(g_);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Values(s.Run({{x, Vec({1, 2})}}, {triple}).value()[0]),
              (std::vector<float>{3, 6}));
  }
  EXPECT_EQ(binds, 1);
}

// Where the forwarding tests' buffers were: Ramp's output, and the output
// of the op that may take over its input.
struct Buffers {
  const float* made = nullptr;
  const float* out = nullptr;
};

// float [3] {1, 2, 3}, computed each run (no inputs: never folded).
OpDef RampDef(Buffers* b) {
  return OpDef{.type = "Ramp", .kernel = [b](OpKernelContext& ctx) {
                 ctx.set_output(0, Vec({1, 2, 3}));
                 b->made = ctx.outputs()[0].data<float>().data();
                 return absl::OkStatus();
               }};
}

// The sum of its inputs plus one, computed in place on its last input
// when the executor lets it take that input over.
OpDef PlusOneDef(Buffers* b) {
  return OpDef{
      .type = "PlusOne", .kernel = [b](OpKernelContext& ctx) -> absl::Status {
        const int last = ctx.num_inputs() - 1;
        std::vector<Tensor::ConstFlat<float>> in;
        for (int i = 0; i <= last; ++i)
          in.push_back(ctx.input(i).flat<float>());
        absl::StatusOr<Tensor*> out = ctx.forward_input_or_allocate_output(
            last, 0, DT_FLOAT, ctx.input(last).shape());
        if (!out.ok()) return out.status();
        Tensor::Flat<float> o = (*out)->mutable_flat<float>();
        Eigen::ArrayXf sum = Eigen::ArrayXf::Ones(o.size());
        for (const auto& x : in) sum += x;
        o = sum;
        b->out = (*out)->data<float>().data();
        return absl::OkStatus();
      }};
}

// Ramp feeding PlusOne, which reads it `reads` times; the defs live here,
// at a stable address, as long as the nodes that point at them.
struct RampPlus {
  Buffers b;
  OpDef ramp_def = RampDef(&b);
  OpDef plus_def = PlusOneDef(&b);
  Output ramp;
  Output plus;
};

std::unique_ptr<RampPlus> MakeRampPlus(Graph& g, int reads) {
  auto rp = std::make_unique<RampPlus>();
  rp->ramp = Output(ConsumerNode(g, &rp->ramp_def, "ramp", {}, {3}), 0);
  rp->plus = Output(ConsumerNode(g, &rp->plus_def, "plus",
                                 std::vector<Output>(reads, rp->ramp), {3}),
                    0);
  return rp;
}

TEST_F(SessionTest, AKernelTakesOverTheLastUseOfAnIntermediate) {
  std::unique_ptr<RampPlus> rp = MakeRampPlus(g_, 1);
  Session s(g_);
  EXPECT_EQ(Values(s.Run({}, {rp->plus}).value()[0]),
            (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(rp->b.out, rp->b.made);
}

TEST_F(SessionTest, AFetchedTensorIsNeverTakenOver) {
  std::unique_ptr<RampPlus> rp = MakeRampPlus(g_, 1);
  Session s(g_);
  std::vector<Tensor> out = s.Run({}, {rp->plus, rp->ramp}).value();
  EXPECT_EQ(Values(out[0]), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{1, 2, 3}));
  EXPECT_NE(rp->b.out, rp->b.made);
}

TEST_F(SessionTest, AnInputTheStepReadsTwiceIsNotTakenOver) {
  std::unique_ptr<RampPlus> rp = MakeRampPlus(g_, 2);
  Session s(g_);
  EXPECT_EQ(Values(s.Run({}, {rp->plus}).value()[0]),
            (std::vector<float>{3, 5, 7}));
  EXPECT_NE(rp->b.out, rp->b.made);
}

TEST_F(SessionTest, AFedTensorIsNeverTakenOver) {
  Buffers b;
  OpDef plus_def = PlusOneDef(&b);
  Output x = ops_.Placeholder(g_, TensorShape{3}).value();
  Output plus(ConsumerNode(g_, &plus_def, "plus", {x}, {3}), 0);
  const Tensor fed = Vec({1, 2, 3});
  Session s(g_);
  EXPECT_EQ(Values(s.Run({{x, fed}}, {plus}).value()[0]),
            (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(Values(fed), (std::vector<float>{1, 2, 3}));
  EXPECT_NE(b.out, fed.data<float>().data());
}

TEST_F(SessionTest, FailingConstantKernelFailsEveryRunNamingItsNode) {
  OpDef def{.type = "NoValue",
            .dispatch = OpDef::Dispatch::kConstant,
            .kernel = [](OpKernelContext&) {
              return absl::InvalidArgumentError("no value");
            }};
  Output bad(SourceNode(g_, &def, "bad"), 0);
  Session s(g_);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::vector<Tensor>> r = s.Run({}, {bad});
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "NoValue 'bad': no value");
  }
  EXPECT_EQ(s.CachedPlansForTesting(), 0u);
}

TEST_F(SessionTest, HandleKernelIsNeverRun) {
  int runs = 0;
  OpDef def{.type = "Handle",
            .dispatch = OpDef::Dispatch::kHandle,
            .kernel = [&runs](OpKernelContext&) {
              ++runs;
              return absl::OkStatus();
            }};
  NodeHandle handle = SourceNode(g_, &def, "handle");
  Session s(g_);
  ASSERT_TRUE(s.Run({}, {}, {Output(handle, 0)}).ok());
  EXPECT_EQ(runs, 0);
}

TEST_F(SessionTest, CycleIsAnError) {
  Output a = ops_.Const(g_, Vec({1})).value();
  Output b = ops_.Identity(a, "b").value();
  Output c = ops_.Identity(b, "c").value();
  ASSERT_TRUE(g_.AddControlEdge(c.handle(), b.handle()).ok());
  Session s(g_);
  absl::StatusOr<std::vector<Tensor>> r = s.Run({}, {c});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Says(r.status(), "cycle"));
}

TEST_F(SessionTest, FailedRunLeavesNothingPinned) {
  Output a = ops_.Const(g_, Vec({1})).value();
  Output f = ops_.Unary("Fail", a).value();
  Session s(g_);
  EXPECT_FALSE(s.Run({}, {f}).ok());
  EXPECT_EQ(g_.heap().pin_count(), 0u);
}

TEST_F(SessionTest, RunsConcurrentlyFromManyThreads) {
  Output x = ops_.Placeholder(g_, {-1}).value();
  Output sq = ops_.Square(x).value();
  Output y = ops_.Add(sq, x).value();
  Session s(g_, {.intra_op_threads = 2});
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const float v = static_cast<float>(t * 1000 + i);
        auto out = s.Run({{x, Vec({v})}}, i % 2 ? std::vector<Output>{y}
                                                : std::vector<Output>{y, sq});
        if (!out.ok() || Values((*out)[0])[0] != v * v + v) ++failures;
      }
    });
  }
  // A collector thread racing with the runs (nothing to sweep but garbage).
  threads.emplace_back([&] {
    for (int i = 0; i < 50; ++i) {
      { Output junk = ops_.Identity(x).value(); }
      g_.Collect();
    }
  });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(s.CachedPlansForTesting(), 2u);
}

TEST_F(SessionTest, PlanSizeDoesNotDependOnUnrelatedNodes) {
  Output x = ops_.Placeholder(g_, {-1}).value();
  Output chain = x;
  for (int i = 0; i < 10; ++i) chain = ops_.Identity(chain).value();
  Session s(g_);
  EXPECT_EQ(s.PlanSizeForTesting({{x, Vec({1})}}, {chain}).value(), 10);
  // Unrelated nodes, many of them consumers of the plan's own nodes (which
  // a walk from the fetch must not visit).
  std::vector<Output> keep;
  for (int i = 0; i < 10000; ++i) {
    keep.push_back(i % 2 ? ops_.Identity(chain).value()
                         : ops_.Scalar(g_, 1.f).value());
  }
  EXPECT_EQ(s.PlanSizeForTesting({{x, Vec({1})}}, {chain}).value(), 10);
  EXPECT_EQ(Values(s.Run({{x, Vec({4})}}, {chain}).value()[0]),
            (std::vector<float>{4}));
}

// A node whose kernel records the thread count of the device it ran on.
class ThreadProbe {
 public:
  explicit ThreadProbe(Graph& g) {
    NodeSpec spec;
    spec.op = "Probe";
    spec.op_def = &def_;
    node_ = g.AddNode(std::move(spec)).value();
  }
  // The device's threads when `s` ran the probe (0 if the run failed).
  int ThreadsSeenBy(Session& s) {
    seen_ = 0;
    if (!s.Run({}, {}, {Output(node_, 0)}).ok()) return 0;
    return seen_;
  }

 private:
  int seen_ = 0;
  OpDef def_{.type = "Probe", .kernel = [this](OpKernelContext& c) {
               seen_ = static_cast<int>(c.device().numThreads());
               return absl::OkStatus();
             }};
  NodeHandle node_;
};

TEST_F(SessionTest, KernelsSeeTheIntraOpDevice) {
  ThreadProbe probe(g_);
  Session s(g_, {.intra_op_threads = 3});
  EXPECT_EQ(probe.ThreadsSeenBy(s), 3);
}

TEST_F(SessionTest, DefaultOptionsTakeTheProcessCountWhenMade) {
  ThreadProbe probe(g_);
  ASSERT_TRUE(SetIntraOpThreads(3).ok());
  Session made_at_three(g_);
  ASSERT_TRUE(SetIntraOpThreads(0).ok());
  // A session keeps the count it was made with.
  EXPECT_EQ(probe.ThreadsSeenBy(made_at_three), 3);
  Session automatic(g_);
  EXPECT_EQ(probe.ThreadsSeenBy(automatic), IntraOpThreads());
}

}  // namespace
}  // namespace graphgc

namespace graphgc {
namespace {

TEST(SessionLifetime, ASessionThatRanMayBeDestroyedAfterItsGraph) {
  testing::TestOps ops;
  auto g = std::make_unique<Graph>();
  Output a = ops.Const(*g, Vec({1, 2})).value();
  auto s = std::make_unique<Session>(*g);
  ASSERT_TRUE(s->Run({}, {a}).ok());
  g.reset();
  s.reset();
  a = Output();
}

}  // namespace
}  // namespace graphgc
