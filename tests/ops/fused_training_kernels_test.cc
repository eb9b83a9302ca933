#include "ops/fused_training_kernels.h"

#include <cstdint>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "ops/registry.h"
#include "runtime/graph.h"
#include "runtime/node_view.h"
#include "unsupported/Eigen/CXX11/Tensor"
#include "unsupported/Eigen/CXX11/ThreadPool"

namespace graphgc {
namespace {

Tensor Floats(std::vector<int64_t> shape, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (i % 13) - 0.6f;
  return Tensor::FromData<float>(TensorShape(shape), v).value();
}

Tensor Dims(std::vector<int32_t> dims) {
  return Tensor::FromData<int32_t>({static_cast<int64_t>(dims.size())}, dims)
      .value();
}

const FusedLossGradientSpec kSpec = {.mul_name = "grad/Broadcast",
                                     .real_div_name = "grad/RealDiv",
                                     .reshape_name = "grad/ExpandDims"};

// Runs the fused kernel on (x, g, d, shape, backprop) as the step of a Mul
// node named "grad/Mul".
class FusedLossGradientTest : public ::testing::Test {
 protected:
  absl::StatusOr<Tensor> Run(const Tensor& x, const Tensor& g, const Tensor& d,
                             const Tensor& shape, const Tensor& backprop) {
    Output a = ops::Placeholder(g_, DT_FLOAT, {-1, -1}).value();
    const NodeView node(ops::Mul(a, a, {.name = "grad/Mul"}).value());
    const Tensor* in[5] = {&x, &g, &d, &shape, &backprop};
    NodeResource* resources[5] = {};
    OpKernelContext ctx(node, in, resources, &device_, 1);
    absl::Status s = BindFusedLossGradient(kSpec)(ctx);
    if (!s.ok()) return s;
    return ctx.outputs()[0];
  }

  // Runs the chain with g = 0.7 and d = 3 on x [4] and `backprop` (of 4
  // rows or 1) and checks that each value of the [4, 3] result is
  // backprop's, broadcast, times what the kernels compute in their order:
  // g * 1, then / d.
  void ExpectBackpropTimesGOverD(const Tensor& backprop) {
    absl::StatusOr<Tensor> out =
        Run(Floats({4}, 1.f), Tensor::FromData<float>({1}, {0.7f}).value(),
            Tensor::Scalar<float>(3.f), Dims({-1, 1}), backprop);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->shape(), (TensorShape{4, 3}));
    const float one = 1.0f;
    const float scale = (0.7f * one) / 3.f;
    const auto b = backprop.data<float>(), o = out->data<float>();
    for (size_t i = 0; i < o.size(); ++i) {
      EXPECT_EQ(o[i], b[i % b.size()] * scale) << i;
    }
  }

  Graph g_;
  Eigen::ThreadPool pool_{1};
  Eigen::ThreadPoolDevice device_{&pool_, 1};
};

TEST_F(FusedLossGradientTest, ScalesEachBackpropValueByGOverD) {
  ExpectBackpropTimesGOverD(Floats({4, 3}, 0.31f));
}

TEST_F(FusedLossGradientTest, ComputesAGradientOfSeveralValuesPerRow) {
  const Tensor g = Floats({4}, 0.17f);
  const Tensor backprop = Floats({4, 3}, 0.31f);
  absl::StatusOr<Tensor> out = Run(
      Floats({4}, 1.f), g, Tensor::Scalar<float>(3.f), Dims({-1, 1}), backprop);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->shape(), (TensorShape{4, 3}));
  const auto gv = g.data<float>(), b = backprop.data<float>();
  const auto o = out->data<float>();
  const float one = 1.0f;
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(o[i * 3 + j], b[i * 3 + j] * ((gv[i] * one) / 3.f));
    }
  }
}

TEST_F(FusedLossGradientTest, BroadcastsTheBackpropAsTheLastMulWould) {
  // A backprop of one row and a reshape to [4, 1]: the result is [4, 3].
  ExpectBackpropTimesGOverD(Floats({1, 3}, 0.31f));
}

TEST_F(FusedLossGradientTest, AShapeTheReshapeCannotTakeIsRefusedNamingIt) {
  absl::StatusOr<Tensor> out =
      Run(Floats({4}, 1.f), Tensor::FromData<float>({1}, {0.7f}).value(),
          Tensor::Scalar<float>(3.f), Dims({-1, 3}), Floats({4, 3}, 0.31f));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(
      out.status().message(),
      "Reshape 'grad/ExpandDims': cannot reshape 4 elements to [?,3]"))
      << out.status();
}

TEST_F(FusedLossGradientTest, ADivisorOfAnotherShapeIsRefusedNamingTheRealDiv) {
  absl::StatusOr<Tensor> out =
      Run(Floats({4}, 1.f), Tensor::FromData<float>({1}, {0.7f}).value(),
          Floats({3}, 1.f), Dims({-1, 1}), Floats({4, 3}, 0.31f));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "RealDiv 'grad/RealDiv': incompatible shapes"))
      << out.status();
}

TEST_F(FusedLossGradientTest,
       ABackpropOfAnotherBatchIsRefusedNamingTheLastMul) {
  absl::StatusOr<Tensor> out =
      Run(Floats({4}, 1.f), Tensor::FromData<float>({1}, {0.7f}).value(),
          Tensor::Scalar<float>(3.f), Dims({-1, 1}), Floats({5, 3}, 0.31f));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "Mul 'grad/Mul': incompatible shapes"))
      << out.status();
}

// The rule of FusedLossGradientRule over the global registry's OpDefs.
FusionRule CoreRule() {
  const OpRegistry& r = GlobalOpRegistry();
  return FusedLossGradientRule(
      (*r.Lookup("OnesLike"))->def, (*r.Lookup("Mul"))->def,
      (*r.Lookup("RealDiv"))->def, (*r.Lookup("Reshape"))->def);
}

TEST(FusedLossGradientRule, LinksEachStepAtTheInputItsGradientBuildsIt) {
  const FusionRule rule = CoreRule();
  ASSERT_EQ(rule.chain.size(), 5u);
  EXPECT_EQ(rule.chain[1], rule.chain[4]);  // both Mul
  EXPECT_EQ(rule.links, (std::vector<int>{1, 0, 0, 1}));
}

TEST(FusedLossGradientRule, BindsAFloatChain) {
  const AttrMap f{{"T", DT_FLOAT}};
  const FusedNode nodes[5] = {
      {"ones", &f}, {"mul", &f}, {"div", &f}, {"reshape", &f}, {"mul_1", &f}};
  EXPECT_TRUE(static_cast<bool>(CoreRule().bind(nodes)));
}

TEST(FusedLossGradientRule, LeavesAChainOfAnotherDtypeUnfused) {
  const AttrMap f{{"T", DT_FLOAT}}, d{{"T", DT_DOUBLE}};
  const FusedNode nodes[5] = {
      {"ones", &f}, {"mul", &f}, {"div", &d}, {"reshape", &f}, {"mul_1", &f}};
  EXPECT_FALSE(static_cast<bool>(CoreRule().bind(nodes)));
}

// Runs BindFusedSizeCast's kernel on `x` as the step of a Cast node.
absl::StatusOr<Tensor> RunSizeCast(DataType size_type, DataType cast_to,
                                   const Tensor& x) {
  Graph g;
  Output a = ops::Placeholder(g, DT_FLOAT, {-1}).value();
  const NodeView node(ops::Cast(a, cast_to).value());
  Eigen::ThreadPool pool(1);
  Eigen::ThreadPoolDevice device(&pool, 1);
  const Tensor* in[1] = {&x};
  NodeResource* resources[1] = {nullptr};
  OpKernelContext ctx(node, in, resources, &device, 1);
  absl::Status s = BindFusedSizeCast(size_type, cast_to)(ctx);
  if (!s.ok()) return s;
  return ctx.outputs()[0];
}

TEST(FusedSizeCast, GivesTheElementCountInTheCastsType) {
  absl::StatusOr<Tensor> f = RunSizeCast(DT_INT32, DT_FLOAT, Floats({4, 3}, 1));
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->dtype(), DT_FLOAT);
  EXPECT_EQ(f->shape(), TensorShape{});
  EXPECT_EQ(f->data<float>()[0], 12.0f);
  absl::StatusOr<Tensor> i = RunSizeCast(DT_INT64, DT_INT32, Floats({5}, 1));
  ASSERT_TRUE(i.ok()) << i.status();
  ASSERT_EQ(i->dtype(), DT_INT32);
  EXPECT_EQ(i->data<int32_t>()[0], 5);
}

FusionRule CoreSizeCastRule() {
  const OpRegistry& r = GlobalOpRegistry();
  return FusedSizeCastRule((*r.Lookup("Size"))->def, (*r.Lookup("Cast"))->def);
}

TEST(FusedSizeCastRule, BindsACountCastToANumber) {
  const AttrMap size{{"out_type", DT_INT64}}, cast{{"DstT", DT_FLOAT}};
  const FusedNode nodes[2] = {{"size", &size}, {"cast", &cast}};
  EXPECT_TRUE(static_cast<bool>(CoreSizeCastRule().bind(nodes)));
}

TEST(FusedSizeCastRule, LeavesACountCastToBoolUnfused) {
  const AttrMap size{{"out_type", DT_INT32}}, cast{{"DstT", DT_BOOL}};
  const FusedNode nodes[2] = {{"size", &size}, {"cast", &cast}};
  EXPECT_FALSE(static_cast<bool>(CoreSizeCastRule().bind(nodes)));
}

FusionRule CoreScaleVariableRule() {
  const OpRegistry& r = GlobalOpRegistry();
  return FusedScaleVariableRule((*r.Lookup("ReadVariableOp"))->def,
                                (*r.Lookup("Mul"))->def,
                                (*r.Lookup("AssignVariableOp"))->def);
}

TEST(FusedScaleVariableRule, LinksTheProductAsTheAssignedValue) {
  EXPECT_EQ(CoreScaleVariableRule().links, (std::vector<int>{0, 1}));
}

TEST(FusedScaleVariableRule, BindsAFloatChain) {
  const AttrMap var{{"dtype", DT_FLOAT}}, mul{{"T", DT_FLOAT}};
  const FusedNode nodes[3] = {{"read", &var}, {"mul", &mul}, {"set", &var}};
  EXPECT_TRUE(static_cast<bool>(CoreScaleVariableRule().bind(nodes)));
}

TEST(FusedScaleVariableRule, LeavesAnIntegerChainUnfused) {
  const AttrMap var{{"dtype", DT_INT32}}, mul{{"T", DT_INT32}};
  const FusedNode nodes[3] = {{"read", &var}, {"mul", &mul}, {"set", &var}};
  EXPECT_FALSE(static_cast<bool>(CoreScaleVariableRule().bind(nodes)));
}

}  // namespace
}  // namespace graphgc
