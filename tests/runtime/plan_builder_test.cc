#include "runtime/plan_builder.h"

#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/array_ops.h"
#include "ops/math_ops.h"
#include "ops/nn_ops.h"
#include "ops/ops.h"
#include "ops/registry.h"
#include "runtime/executor.h"
#include "runtime/fusion.h"
#include "runtime/graph.h"
#include "runtime/plan.h"
#include "runtime/session.h"
#include "tests/runtime/executor_fixture.h"
#include "tests/runtime/test_ops.h"
#include "util/float_mode.h"

namespace graphgc {
namespace exec {
namespace {

using testing::Vec;

class PlanBuilderTest : public ExecutorFixture {
 protected:
  absl::StatusOr<std::shared_ptr<const Plan>> Build(
      const Feeds& feeds, const std::vector<Output>& fetches,
      const std::vector<Output>& targets = {}) {
    return BuildPlan(g_, executor_.device(), feeds, fetches, targets);
  }
};

TEST_F(PlanBuilderTest, WalkSubgraphPutsInputsBeforeTheirReaders) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  Output sum = ops_.Add(sq, x).value();
  std::shared_ptr<const Plan> plan = Build({{x, Vec({1, 2})}}, {sum}).value();
  ASSERT_EQ(plan->steps.size(), 2u);
  EXPECT_EQ(plan->steps[0].id, sq.handle().id());
  EXPECT_EQ(plan->steps[1].id, sum.handle().id());
  EXPECT_EQ(plan->ids, (std::vector<NodeId>{x.handle().id(), sq.handle().id(),
                                            sum.handle().id()}));
}

TEST_F(PlanBuilderTest, WalkSubgraphStopsAtAFedOutput) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  Output sum = ops_.Add(sq, sq).value();
  std::shared_ptr<const Plan> plan = Build({{sq, Vec({1, 2})}}, {sum}).value();
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(plan->steps[0].id, sum.handle().id());
}

TEST_F(PlanBuilderTest, WalkSubgraphRefusesAnUnfedFeedPoint) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  absl::Status s = Build({}, {sq}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'x' must be fed")) << s;
}

// A source node of `def` named `name` with one float output of shape [1].
NodeHandle SourceNode(Graph& g, const OpDef* def, const std::string& name) {
  NodeSpec spec{.op = def->type, .op_def = def, .name = name};
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {TensorShape({1})};
  return g.AddNode(std::move(spec)).value();
}

TEST_F(PlanBuilderTest, WalkSubgraphAsksTheOpDefWhetherANodeIsAFeedPoint) {
  const OpDef def{.type = "Input", .dispatch = OpDef::Dispatch::kFeed};
  Output in(SourceNode(g_, &def, "in"), 0);
  Output sq = ops_.Square(in).value();
  absl::Status s = Build({}, {sq}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "Input 'in' must be fed")) << s;
  EXPECT_TRUE(Build({{in, Vec({2})}}, {sq}).ok());
}

TEST_F(PlanBuilderTest, BindKernelsAndFoldSkipsAnOpThatComputesNothing) {
  int runs = 0;
  const OpDef def{.type = "Barrier",
                  .dispatch = OpDef::Dispatch::kNothing,
                  .kernel = [&runs](OpKernelContext&) {
                    ++runs;
                    return absl::OkStatus();
                  }};
  NodeHandle barrier = SourceNode(g_, &def, "barrier");
  std::shared_ptr<const Plan> plan =
      Build({}, {}, {Output(barrier, 0)}).value();
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(plan->steps[0].kind, Step::Kind::kSkip);
  EXPECT_EQ(runs, 0);
}

TEST_F(PlanBuilderTest, AssignSlotsNumbersFeedsFirstThenEachStepsOutputs) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  Output sum = ops_.Add(sq, x).value();
  std::shared_ptr<const Plan> plan = Build({{x, Vec({1, 2})}}, {sum}).value();
  EXPECT_EQ(plan->feeds[0].slot, 0u);
  EXPECT_EQ(plan->steps[0].output_base, 1u);
  EXPECT_EQ(plan->steps[1].output_base, 2u);
  EXPECT_EQ(plan->num_slots, 3u);
  EXPECT_EQ(plan->output_checks.size(), 3u);
}

TEST_F(PlanBuilderTest, BindKernelsAndFoldWiresEachInputToItsProducersSlot) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  Output sum = ops_.Add(sq, x).value();
  std::shared_ptr<const Plan> plan = Build({{x, Vec({1, 2})}}, {sum}).value();
  const Step& add = plan->steps[1];
  ASSERT_EQ(add.num_inputs, 2u);
  EXPECT_EQ(plan->inputs[add.input_begin].slot, 1u);      // sq
  EXPECT_EQ(plan->inputs[add.input_begin + 1].slot, 0u);  // the feed
  EXPECT_EQ(add.kind, Step::Kind::kRun);
  EXPECT_TRUE(static_cast<bool>(add.kernel));
}

TEST_F(PlanBuilderTest, FindLastUsesTakesASlotOnlyAtItsLastReader) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  Output a = ops_.Identity(sq).value();
  Output b = ops_.Add(a, sq).value();
  std::shared_ptr<const Plan> plan = Build({{x, Vec({1, 2})}}, {b}).value();
  ASSERT_EQ(plan->steps.size(), 3u);                               // sq, a, b
  EXPECT_FALSE(plan->inputs[plan->steps[1].input_begin].take);     // a reads sq
  EXPECT_TRUE(plan->inputs[plan->steps[2].input_begin + 1].take);  // b does
}

TEST_F(PlanBuilderTest, FindLastUsesNeverTakesAFetchedSlot) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  Output a = ops_.Identity(sq).value();
  std::shared_ptr<const Plan> plan = Build({{x, Vec({1, 2})}}, {a, sq}).value();
  EXPECT_FALSE(plan->inputs[plan->steps[1].input_begin].take);
  EXPECT_EQ(plan->fetch_slots, (std::vector<uint32_t>{2, 1}));
}

TEST_F(PlanBuilderTest, MarkForwardingOffersATakenInputReadOnce) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  Output a = ops_.Identity(sq).value();
  std::shared_ptr<const Plan> plan = Build({{x, Vec({1, 2})}}, {a}).value();
  const Step& id = plan->steps[1];
  EXPECT_EQ(id.forwardable, 1u);
  ASSERT_EQ(id.num_takes, 1u);
  EXPECT_EQ(plan->takes[id.take_begin], 1u);
}

TEST_F(PlanBuilderTest, MarkForwardingWithholdsASlotTheStepReadsTwice) {
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output sq = ops_.Square(x).value();
  Output m = ops_.Mul(sq, sq).value();
  std::shared_ptr<const Plan> plan = Build({{x, Vec({1, 2})}}, {m}).value();
  const Step& mul = plan->steps[1];
  EXPECT_EQ(mul.num_takes, 1u);
  EXPECT_EQ(mul.forwardable, 0u);
}

// A Dense layer's chain with the real ops: x [-1, 7] fed, then MatMul by a
// 7 x 19 constant, BiasAdd of 19 values and Relu (19: a row that is not a
// whole number of packets). Weights of both signs, so Relu zeroes some.
struct DenseChain {
  Output x, matmul, bias_add, relu;
};
DenseChain BuildDenseChain(Graph& g) {
  std::vector<float> w(7 * 19), bias(19);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.37f * (i % 11) - 1.7f;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.21f * (i % 5) - 0.4f;
  DenseChain c;
  c.x = ops::Placeholder(g, DT_FLOAT, {-1, 7}).value();
  Output wc =
      ops::Const(g, Tensor::FromData<float>({7, 19}, w).value()).value();
  Output bc =
      ops::Const(g, Tensor::FromData<float>({19}, bias).value()).value();
  c.matmul = ops::MatMul(c.x, wc).value();
  c.bias_add = ops::BiasAdd(c.matmul, bc).value();
  c.relu = ops::Relu(c.bias_add).value();
  return c;
}
Tensor Batch(int rows) {
  std::vector<float> v(rows * 7);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.13f * (i % 17) - 1.1f;
  return Tensor::FromData<float>({rows, 7}, v).value();
}
// The steps of `plan` that run a kernel, by node.
std::vector<NodeId> RunSteps(const Plan& plan) {
  std::vector<NodeId> ids;
  for (const Step& s : plan.steps) {
    if (s.kind == Step::Kind::kRun) ids.push_back(s.id);
  }
  return ids;
}

TEST_F(PlanBuilderTest, FuseChainsRunsMatMulBiasAddReluAsOneStep) {
  DenseChain c = BuildDenseChain(g_);
  std::shared_ptr<const Plan> plan = Build({{c.x, Batch(5)}}, {c.relu}).value();
  EXPECT_EQ(RunSteps(*plan), std::vector<NodeId>{c.relu.handle().id()});
  for (const Step& s : plan->steps) {
    EXPECT_EQ(s.fused, s.id == c.relu.handle().id());
  }
}

TEST_F(PlanBuilderTest, FuseChainsLeavesAChainWhoseProductIsFetched) {
  DenseChain c = BuildDenseChain(g_);
  std::shared_ptr<const Plan> plan =
      Build({{c.x, Batch(5)}}, {c.relu, c.matmul}).value();
  EXPECT_EQ(RunSteps(*plan), (std::vector<NodeId>{c.matmul.handle().id(),
                                                  c.bias_add.handle().id(),
                                                  c.relu.handle().id()}));
}

TEST_F(PlanBuilderTest, FuseChainsEndsAtABiasAddThatAnotherStepReads) {
  DenseChain c = BuildDenseChain(g_);
  Output other = ops::Square(c.bias_add).value();
  std::shared_ptr<const Plan> plan =
      Build({{c.x, Batch(5)}}, {c.relu, other}).value();
  // MatMul and BiasAdd run as one step; Relu and Square read its output.
  std::vector<NodeId> run = RunSteps(*plan);
  ASSERT_EQ(run.size(), 3u);
  EXPECT_EQ(run[0], c.bias_add.handle().id());
  for (const Step& s : plan->steps) {
    EXPECT_EQ(s.fused, s.id == c.bias_add.handle().id());
  }
}

TEST_F(PlanBuilderTest, AFusedChainComputesBitForBitWhatItsThreeKernelsDo) {
  DenseChain c = BuildDenseChain(g_);
  Session session(g_);
  const Tensor x = Batch(5);
  // Fetching the product too keeps the chain unfused.
  std::vector<Tensor> fused = session.Run({{c.x, x}}, {c.relu}).value();
  std::vector<Tensor> plain =
      session.Run({{c.x, x}}, {c.relu, c.matmul}).value();
  ASSERT_EQ(fused[0].shape(), plain[0].shape());
  const absl::Span<const float> a = fused[0].data<float>();
  const absl::Span<const float> b = plain[0].data<float>();
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  int zeros = 0, positives = 0;
  for (float v : a) (v == 0 ? zeros : positives)++;
  EXPECT_GT(zeros, 0);
  EXPECT_GT(positives, 0);
}

// The bits of a float tensor, for bit-for-bit comparisons.
std::vector<uint32_t> Bits(const Tensor& t) {
  const absl::Span<const float> v = t.data<float>();
  std::vector<uint32_t> bits(v.size());
  std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
  return bits;
}

// A Dense layer's backward chain under a ReLU: dh = MatMul(dy, w^T), then
// ReluGrad(dh, h), with dy [-1, 19] fed and h a fed [-1, 7] of both signs.
struct BackwardChain {
  Output dy, h, matmul, relu_grad;
};
BackwardChain BuildBackwardChain(Graph& g) {
  std::vector<float> w(7 * 19);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.37f * (i % 11) - 1.7f;
  BackwardChain c;
  c.dy = ops::Placeholder(g, DT_FLOAT, {-1, 19}).value();
  c.h = ops::Placeholder(g, DT_FLOAT, {-1, 7}).value();
  Output wc =
      ops::Const(g, Tensor::FromData<float>({7, 19}, w).value()).value();
  c.matmul = ops::MatMul(c.dy, wc, {.transpose_b = true}).value();
  c.relu_grad = ops::ReluGrad(c.matmul, c.h).value();
  return c;
}
Tensor Values(int rows, int cols, float scale) {
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (i % 17) - 1.1f;
  return Tensor::FromData<float>({rows, cols}, v).value();
}

TEST_F(PlanBuilderTest, FuseChainsRunsMatMulReluGradAsOneStep) {
  BackwardChain c = BuildBackwardChain(g_);
  std::shared_ptr<const Plan> plan =
      Build({{c.dy, Values(5, 19, 0.1f)}, {c.h, Values(5, 7, 0.13f)}},
            {c.relu_grad})
          .value();
  EXPECT_EQ(RunSteps(*plan), std::vector<NodeId>{c.relu_grad.handle().id()});
}

TEST_F(PlanBuilderTest, AFusedBackwardChainComputesBitForBitWhatItsKernelsDo) {
  BackwardChain c = BuildBackwardChain(g_);
  Session session(g_);
  const Feeds feeds = {{c.dy, Values(5, 19, 0.1f)}, {c.h, Values(5, 7, 0.13f)}};
  std::vector<Tensor> fused = session.Run(feeds, {c.relu_grad}).value();
  // Fetching the product too keeps the chain unfused.
  std::vector<Tensor> plain =
      session.Run(feeds, {c.relu_grad, c.matmul}).value();
  EXPECT_EQ(Bits(fused[0]), Bits(plain[0]));
  int zeros = 0, others = 0;
  for (float v : fused[0].data<float>()) (v == 0 ? zeros : others)++;
  EXPECT_GT(zeros, 0);
  EXPECT_GT(others, 0);
}

TEST_F(PlanBuilderTest, FuseChainsLeavesAChainThatAStepWaitsOnUnfused) {
  DenseChain c = BuildDenseChain(g_);
  Output after = ops::Square(c.relu).value();
  ASSERT_TRUE(g_.AddControlEdge(c.bias_add.handle(), after.handle()).ok());
  std::shared_ptr<const Plan> plan = Build({{c.x, Batch(5)}}, {after}).value();
  // MatMul and BiasAdd still fuse (the BiasAdd ends that chain); the Relu
  // runs alone.
  EXPECT_EQ(RunSteps(*plan),
            (std::vector<NodeId>{c.bias_add.handle().id(), c.relu.handle().id(),
                                 after.handle().id()}));
}

TEST_F(PlanBuilderTest,
       FuseChainsLeavesAGraphFromARegistryWithoutRulesUnfused) {
  OpRegistry registry;  // the core ops without RegisterCoreOps' rules
  RegisterArrayOps(registry);
  RegisterMathOps(registry);
  RegisterNnOps(registry);
  DenseChain fused = BuildDenseChain(g_);
  const NodeInfo matmul = g_.Describe(fused.matmul.handle()).value();
  const NodeInfo bias_add = g_.Describe(fused.bias_add.handle()).value();
  auto build = [&](const std::string& op, std::vector<BuildInput> inputs) {
    return Output(
        BuildNode(registry, g_, op, "", std::move(inputs), {}, {}).value(), 0);
  };
  Output mm = build("MatMul", {fused.x, matmul.inputs[1]});
  Output ba = build("BiasAdd", {mm, bias_add.inputs[1]});
  Output relu = build("Relu", {ba});
  std::shared_ptr<const Plan> plan =
      Build({{fused.x, Batch(5)}}, {relu}).value();
  EXPECT_EQ(RunSteps(*plan),
            (std::vector<NodeId>{mm.handle().id(), ba.handle().id(),
                                 relu.handle().id()}));
  // The same chain with the global registry's OpDefs is fused, and both
  // compute the same bits.
  Session session(g_);
  std::vector<Tensor> out =
      session.Run({{fused.x, Batch(5)}}, {fused.relu, relu}).value();
  EXPECT_EQ(Bits(out[0]), Bits(out[1]));
}

// A node of `def` reading `inputs`, with one float output shaped like the
// first input.
Output NodeOf(Graph& g, const OpDef& def, const std::string& name,
              std::vector<Output> inputs) {
  NodeSpec spec{.op = def.type, .op_def = &def, .name = name};
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {inputs[0].shape()};
  spec.inputs = std::move(inputs);
  return Output(g.AddNode(std::move(spec)).value(), 0);
}

// (a + b) * c elementwise, from inputs (a, b, c).
absl::Status AddThenMul(OpKernelContext& ctx) {
  const auto a = ctx.input(0).data<float>(), b = ctx.input(1).data<float>(),
             c = ctx.input(2).data<float>();
  absl::StatusOr<Tensor*> out =
      ctx.allocate_output(0, DT_FLOAT, ctx.input(0).shape());
  if (!out.ok()) return out.status();
  auto o = (*out)->mutable_data<float>();
  for (size_t i = 0; i < o.size(); ++i) o[i] = (a[i] + b[i]) * c[i];
  return absl::OkStatus();
}

TEST_F(PlanBuilderTest, FuseChainsRunsTheHeadsRuleAtTheEndOnTheOtherInputs) {
  OpDef head = *ops_.def("Add");
  head.type = "HeadAdd";
  OpDef tail = *ops_.def("Mul");
  tail.type = "TailMul";
  std::vector<std::string> bound;
  head.fusions.push_back(std::make_shared<const FusionRule>(FusionRule{
      .chain = {&head, &tail},
      .bind = [&bound](absl::Span<const FusedNode> nodes) -> KernelFn {
        for (const FusedNode& n : nodes) bound.emplace_back(n.name);
        return AddThenMul;
      }}));
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output z = ops_.Placeholder(g_, TensorShape({2}), "z").value();
  Output h = NodeOf(g_, head, "h", {x, ops_.Square(x).value()});
  Output t = NodeOf(g_, tail, "t", {h, z});
  std::shared_ptr<const Plan> plan =
      Build({{x, Vec({1, 2})}, {z, Vec({3, 5})}}, {t}).value();
  EXPECT_EQ(bound, (std::vector<std::string>{"h", "t"}));
  ASSERT_EQ(plan->steps.size(), 3u);  // Square, h, t
  EXPECT_EQ(plan->steps[1].kind, Step::Kind::kSkip);
  const Step& end = plan->steps[2];
  EXPECT_TRUE(end.fused);
  ASSERT_EQ(end.num_inputs, 3u);  // x, Square's output, z
  EXPECT_EQ(plan->inputs[end.input_begin].slot, 0u);
  EXPECT_EQ(plan->inputs[end.input_begin + 1].slot, plan->steps[0].output_base);
  EXPECT_EQ(plan->inputs[end.input_begin + 2].slot, 1u);
  Session session(g_);
  std::vector<Tensor> out =
      session.Run({{x, Vec({1, 2})}, {z, Vec({3, 5})}}, {t}).value();
  EXPECT_EQ(testing::Values(out[0]), (std::vector<float>{6, 30}));
}

// Add and Mul renamed HeadAdd and TailMul, with one rule: HeadAdd ->
// TailMul where the tail reads the head as its input 1 (z * (a + b)),
// bound to AddThenMul (which reads (a, b, z)).
struct LinkedAtInput1 {
  OpDef head, tail;
};
std::unique_ptr<LinkedAtInput1> RuleLinkedAtInput1(testing::TestOps& ops) {
  auto defs = std::make_unique<LinkedAtInput1>();
  defs->head = *ops.def("Add");
  defs->head.type = "HeadAdd";
  defs->tail = *ops.def("Mul");
  defs->tail.type = "TailMul";
  defs->head.fusions.push_back(std::make_shared<const FusionRule>(
      FusionRule{.chain = {&defs->head, &defs->tail},
                 .links = {1},
                 .bind = [](absl::Span<const FusedNode>) -> KernelFn {
                   return AddThenMul;
                 }}));
  return defs;
}

TEST_F(PlanBuilderTest, FuseChainsFollowsALinkAtTheInputTheRuleNames) {
  std::unique_ptr<LinkedAtInput1> defs = RuleLinkedAtInput1(ops_);
  const OpDef& head = defs->head;
  const OpDef& tail = defs->tail;
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output z = ops_.Placeholder(g_, TensorShape({2}), "z").value();
  Output h = NodeOf(g_, head, "h", {x, ops_.Square(x).value()});
  Output t = NodeOf(g_, tail, "t", {z, h});
  std::shared_ptr<const Plan> plan =
      Build({{x, Vec({1, 2})}, {z, Vec({3, 5})}}, {t}).value();
  ASSERT_EQ(plan->steps.size(), 3u);  // Square, h, t
  EXPECT_EQ(plan->steps[1].kind, Step::Kind::kSkip);
  const Step& end = plan->steps[2];
  EXPECT_TRUE(end.fused);
  ASSERT_EQ(end.num_inputs, 3u);  // x, Square's output, z: all but the link
  EXPECT_EQ(plan->inputs[end.input_begin].slot, 0u);
  EXPECT_EQ(plan->inputs[end.input_begin + 1].slot, plan->steps[0].output_base);
  EXPECT_EQ(plan->inputs[end.input_begin + 2].slot, 1u);
}

TEST_F(PlanBuilderTest, FuseChainsLeavesAChainLinkedAtAnotherInputUnfused) {
  std::unique_ptr<LinkedAtInput1> defs = RuleLinkedAtInput1(ops_);
  const OpDef& head = defs->head;
  const OpDef& tail = defs->tail;
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output z = ops_.Placeholder(g_, TensorShape({2}), "z").value();
  // The head is the tail's input 0, not the input 1 the rule links.
  Output t = NodeOf(g_, tail, "t", {NodeOf(g_, head, "h", {x, x}), z});
  std::shared_ptr<const Plan> plan =
      Build({{x, Vec({1, 2})}, {z, Vec({3, 5})}}, {t}).value();
  for (const Step& step : plan->steps) {
    EXPECT_EQ(step.kind, Step::Kind::kRun);
    EXPECT_FALSE(step.fused);
  }
}

// The chain the gradients of a mean cross-entropy loss build (ReduceGrad,
// XentGrad): Mul(backprop, Reshape(RealDiv(Mul(g, OnesLike(x)), d),
// [-1, 1])), with x [-1], d a scalar and backprop [-1, 10] fed, g [1]
// constant.
struct LossGradientChain {
  Output x, d, backprop, quotient, out;
};
LossGradientChain BuildLossGradientChain(Graph& g) {
  LossGradientChain c;
  c.x = ops::Placeholder(g, DT_FLOAT, {-1}).value();
  c.d = ops::Placeholder(g, DT_FLOAT, {}).value();
  c.backprop = ops::Placeholder(g, DT_FLOAT, {-1, 10}).value();
  Output grad =
      ops::Const(g, Tensor::FromData<float>({1}, {0.7f}).value()).value();
  Output product = ops::Mul(grad, ops::OnesLike(c.x).value()).value();
  c.quotient = ops::RealDiv(product, c.d).value();
  Output column = ops::Reshape(c.quotient, TensorShape{-1, 1}).value();
  c.out = ops::Mul(c.backprop, column).value();
  return c;
}
Feeds LossGradientFeeds(const LossGradientChain& c, int rows, float d) {
  std::vector<float> x(rows, 2.5f);
  return {{c.x, Tensor::FromData<float>({rows}, x).value()},
          {c.d, Tensor::Scalar<float>(d)},
          {c.backprop, Values(rows, 10, 0.113f)}};
}

TEST_F(PlanBuilderTest, FuseChainsRunsTheMeanLossGradientAsOneStep) {
  LossGradientChain c = BuildLossGradientChain(g_);
  std::shared_ptr<const Plan> plan =
      Build(LossGradientFeeds(c, 5, 5.f), {c.out}).value();
  EXPECT_EQ(RunSteps(*plan), std::vector<NodeId>{c.out.handle().id()});
}

TEST_F(PlanBuilderTest, AFusedLossGradientComputesBitForBitWhatItsKernelsDo) {
  LossGradientChain c = BuildLossGradientChain(g_);
  Session session(g_);
  // 3 does not divide 0.7 exactly, so the quotient is rounded.
  const Feeds feeds = LossGradientFeeds(c, 6, 3.f);
  std::vector<Tensor> fused = session.Run(feeds, {c.out}).value();
  // Fetching the quotient too keeps the chain unfused.
  std::vector<Tensor> plain = session.Run(feeds, {c.out, c.quotient}).value();
  ASSERT_EQ(fused[0].shape(), (TensorShape{6, 10}));
  EXPECT_EQ(plain[0].shape(), fused[0].shape());
  EXPECT_EQ(Bits(fused[0]), Bits(plain[0]));
}

TEST_F(PlanBuilderTest, FuseChainsRunsACastElementCountAsOneStep) {
  Output x = ops::Placeholder(g_, DT_FLOAT, {-1}).value();
  Output count = ops::Cast(ops::Size(x).value(), DT_FLOAT).value();
  std::shared_ptr<const Plan> plan =
      Build({{x, Vec({1, 2, 3})}}, {count}).value();
  EXPECT_EQ(RunSteps(*plan), std::vector<NodeId>{count.handle().id()});
  Session session(g_);
  std::vector<Tensor> out = session.Run({{x, Vec({1, 2, 3})}}, {count}).value();
  ASSERT_EQ(out[0].dtype(), DT_FLOAT);
  EXPECT_EQ(out[0].data<float>()[0], 3.0f);
}

// A float scalar variable and its update v <- v * 0.999 (Adam's beta
// powers), with its initialiser to 0.7.
struct ScaledVariable {
  Output init, read, product, update;
};
ScaledVariable BuildScaledVariable(Graph& g) {
  ScaledVariable c;
  Output v = ops::VarHandleOp(g, DT_FLOAT, TensorShape{}).value();
  c.init = ops::AssignVariableOp(v, ops::Const(g, 0.7f).value()).value();
  c.read = ops::ReadVariableOp(v).value();
  c.product = ops::Mul(c.read, ops::Const(g, 0.999f).value()).value();
  c.update = ops::AssignVariableOp(v, c.product).value();
  return c;
}

TEST_F(PlanBuilderTest, FuseChainsRunsAVariableScaledByAFactorAsOneStep) {
  ScaledVariable c = BuildScaledVariable(g_);
  std::shared_ptr<const Plan> plan = Build({}, {}, {c.update}).value();
  EXPECT_EQ(RunSteps(*plan), std::vector<NodeId>{c.update.handle().id()});
}

TEST_F(PlanBuilderTest, AFusedVariableScaleAssignsBitForBitWhatItsKernelsDo) {
  ScaledVariable fused = BuildScaledVariable(g_);
  ScaledVariable plain = BuildScaledVariable(g_);
  Session session(g_);
  ASSERT_TRUE(session.Run({}, {}, {fused.init, plain.init}).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(session.Run({}, {}, {fused.update}).ok());
    // Fetching the product too keeps the chain unfused.
    ASSERT_TRUE(session.Run({}, {plain.product}, {plain.update}).ok());
  }
  std::vector<Tensor> out = session.Run({}, {fused.read, plain.read}).value();
  EXPECT_EQ(Bits(out[0]), Bits(out[1]));
  EXPECT_NE(out[0].data<float>()[0], 0.7f);
}

TEST_F(PlanBuilderTest,
       AFusedVariableScaleOfAVariableNeverAssignedNamesTheRead) {
  ScaledVariable c = BuildScaledVariable(g_);
  Session session(g_);
  absl::Status s = session.Run({}, {}, {c.update}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(
      s.message(), "ReadVariableOp '" + c.read.node_name() + "': variable"))
      << s;
}

TEST_F(PlanBuilderTest, FuseChainsLeavesAChainWhoseBinderGivesNoKernel) {
  OpDef head = *ops_.def("Add");
  head.type = "HeadAdd";
  OpDef tail = *ops_.def("Mul");
  tail.type = "TailMul";
  head.fusions.push_back(std::make_shared<const FusionRule>(FusionRule{
      .chain = {&head, &tail},
      .bind = [](absl::Span<const FusedNode>) { return KernelFn(); }}));
  Output x = ops_.Placeholder(g_, TensorShape({2}), "x").value();
  Output t = NodeOf(g_, tail, "t", {NodeOf(g_, head, "h", {x, x}), x});
  std::shared_ptr<const Plan> plan = Build({{x, Vec({1, 2})}}, {t}).value();
  for (const Step& step : plan->steps) {
    EXPECT_EQ(step.kind, Step::Kind::kRun);
    EXPECT_FALSE(step.fused);
  }
}

TEST_F(PlanBuilderTest, AFoldedStepComputesWithDenormalsFlushedAsRunsDo) {
  if (!ScopedFlushDenormals::kFlushesDenormals) GTEST_SKIP();
  Graph g;
  // 1e-20 squared is 1e-40, a denormal: a run's kernel gives 0
  // (runtime/executor.h), and so must the value folded at build.
  Output sq = ops::Square(ops::Const(g, 1e-20f).value()).value();
  std::shared_ptr<const Plan> plan =
      BuildPlan(g, executor_.device(), {}, {sq}, {}).value();
  ASSERT_EQ(plan->fetch_constants.size(), 1u);
  const int32_t folded = plan->fetch_constants[0];
  ASSERT_GE(folded, 0) << "Square of a Const was not folded";
  EXPECT_EQ(plan->constants[folded].data<float>()[0], 0.f);
}

}  // namespace
}  // namespace exec
}  // namespace graphgc
