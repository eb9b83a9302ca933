#include "ops/registry.h"

#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/fused_kernels.h"
#include "ops/math_ops.h"
#include "ops/ops.h"
#include "runtime/fusion.h"

namespace graphgc {
namespace {

using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::UnorderedElementsAreArray;

TEST(OpRegistry, LookupUnknownOpNamesIt) {
  absl::StatusOr<const RegisteredOp*> op =
      GlobalOpRegistry().Lookup("Frobnicate");
  EXPECT_EQ(op.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(op.status().message(), HasSubstr("'Frobnicate'"));
}

TEST(OpRegistry, HasTheCoreOps) {
  EXPECT_THAT(GlobalOpRegistry().ListOps(),
              IsSupersetOf({"Placeholder",
                            "Const",
                            "Identity",
                            "NoOp",
                            "VarHandleOp",
                            "ReadVariableOp",
                            "AssignVariableOp",
                            "AssignAddVariableOp",
                            "AssignSubVariableOp",
                            "MatMul",
                            "BiasAdd",
                            "BiasAddGrad",
                            "AddV2",
                            "AddN",
                            "Sub",
                            "Mul",
                            "RealDiv",
                            "Neg",
                            "Square",
                            "Sqrt",
                            "Maximum",
                            "Minimum",
                            "Relu",
                            "ReluGrad",
                            "Sigmoid",
                            "Tanh",
                            "Softmax",
                            "LogSoftmax",
                            "Log",
                            "Exp",
                            "SparseSoftmaxCrossEntropyWithLogits",
                            "Sum",
                            "Mean",
                            "Reshape",
                            "Shape",
                            "Fill",
                            "ZerosLike",
                            "OnesLike",
                            "Cast",
                            "ArgMax",
                            "Equal",
                            "RandomUniform",
                            "RandomStandardNormal",
                            "ResourceApplyGradientDescent",
                            "ResourceApplyAdam",
                            "StopGradient",
                            "Transpose"}));
}

TEST(OpRegistry, DuplicateRegistrationIsAlreadyExists) {
  OpRegistry r;
  RegisteredOp op;
  op.def.type = "X";
  op.shape_fn = [](const AttrMap&, absl::Span<const InputInfo>)
      -> absl::StatusOr<std::vector<OutputInfo>> {
    return std::vector<OutputInfo>{};
  };
  EXPECT_TRUE(r.Register(op).ok());
  EXPECT_EQ(r.Register(op).code(), absl::StatusCode::kAlreadyExists);
}

TEST(OpRegistry, RegisterWithoutShapeFunctionIsRejected) {
  OpRegistry r;
  RegisteredOp op;
  op.def.type = "X";
  EXPECT_EQ(r.Register(op).code(), absl::StatusCode::kInvalidArgument);
}

// A registry holding ops "A", "B" and "C", with no kernels.
std::unique_ptr<OpRegistry> RegistryOfABC() {
  auto r = std::make_unique<OpRegistry>();
  for (const char* type : {"A", "B", "C"}) {
    RegisteredOp op;
    op.def.type = type;
    op.shape_fn = [](const AttrMap&, absl::Span<const InputInfo>)
        -> absl::StatusOr<std::vector<OutputInfo>> {
      return std::vector<OutputInfo>{};
    };
    EXPECT_TRUE(r->Register(std::move(op)).ok());
  }
  return r;
}

FusionRule RuleOf(std::vector<const OpDef*> chain) {
  return {.chain = std::move(chain),
          .bind = [](absl::Span<const FusedNode>) { return KernelFn(); }};
}

TEST(OpRegistry, RegisterFusionPutsRulesOnTheHeadLongestFirst) {
  std::unique_ptr<OpRegistry> r = RegistryOfABC();
  const OpDef* a = &(*r->Lookup("A"))->def;
  const OpDef* b = &(*r->Lookup("B"))->def;
  const OpDef* c = &(*r->Lookup("C"))->def;
  ASSERT_TRUE(r->RegisterFusion(RuleOf({a, b})).ok());
  ASSERT_TRUE(r->RegisterFusion(RuleOf({a, b, c})).ok());
  ASSERT_EQ(a->fusions.size(), 2u);
  EXPECT_EQ(a->fusions[0]->chain.size(), 3u);
  EXPECT_EQ(a->fusions[1]->chain.size(), 2u);
  EXPECT_TRUE(b->fusions.empty());
}

TEST(OpRegistry, RegisterFusionRefusesAnOpDefOfAnotherRegistry) {
  std::unique_ptr<OpRegistry> r = RegistryOfABC();
  const OpDef* a = &(*r->Lookup("A"))->def;
  const OpDef stranger{.type = "B"};
  absl::Status s = r->RegisterFusion(RuleOf({a, &stranger}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("op 1 of the chain"));
  EXPECT_TRUE(a->fusions.empty());
}

TEST(OpRegistry, RegisterFusionRefusesAChainOfOneOrNoBinder) {
  std::unique_ptr<OpRegistry> r = RegistryOfABC();
  const OpDef* a = &(*r->Lookup("A"))->def;
  const OpDef* b = &(*r->Lookup("B"))->def;
  EXPECT_EQ(r->RegisterFusion(RuleOf({a})).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r->RegisterFusion(FusionRule{.chain = {a, b}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(a->fusions.empty());
}

TEST(OpRegistry, RegisterFusionRefusesLinksThatDoNotFitTheChain) {
  std::unique_ptr<OpRegistry> r = RegistryOfABC();
  const OpDef* a = &(*r->Lookup("A"))->def;
  const OpDef* b = &(*r->Lookup("B"))->def;
  const OpDef* c = &(*r->Lookup("C"))->def;
  FusionRule one_short = RuleOf({a, b, c});
  one_short.links = {1};
  absl::Status s = r->RegisterFusion(std::move(one_short));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("a chain of 3 ops has 2 links, not 1"));
  FusionRule negative = RuleOf({a, b});
  negative.links = {-1};
  EXPECT_EQ(r->RegisterFusion(std::move(negative)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(a->fusions.empty());
}

TEST(OpRegistry, TheCoreOpsFuseTheMeanLossGradientFromOnesLike) {
  const OpRegistry& r = GlobalOpRegistry();
  const OpDef* ones_like = &(*r.Lookup("OnesLike"))->def;
  const OpDef* mul = &(*r.Lookup("Mul"))->def;
  const OpDef* real_div = &(*r.Lookup("RealDiv"))->def;
  const OpDef* reshape = &(*r.Lookup("Reshape"))->def;
  ASSERT_EQ(ones_like->fusions.size(), 1u);
  EXPECT_EQ(
      ones_like->fusions[0]->chain,
      (std::vector<const OpDef*>{ones_like, mul, real_div, reshape, mul}));
  EXPECT_EQ(ones_like->fusions[0]->links, (std::vector<int>{1, 0, 0, 1}));
}

TEST(OpRegistry, TheCoreOpsFuseMatMulWithBiasAddReluAndReluGrad) {
  const OpRegistry& r = GlobalOpRegistry();
  const OpDef* matmul = &(*r.Lookup("MatMul"))->def;
  const OpDef* bias_add = &(*r.Lookup("BiasAdd"))->def;
  const OpDef* relu = &(*r.Lookup("Relu"))->def;
  const OpDef* relu_grad = &(*r.Lookup("ReluGrad"))->def;
  ASSERT_EQ(matmul->fusions.size(), 3u);
  EXPECT_EQ(matmul->fusions[0]->chain,
            (std::vector<const OpDef*>{matmul, bias_add, relu}));
  EXPECT_EQ(matmul->fusions[1]->chain,
            (std::vector<const OpDef*>{matmul, bias_add}));
  EXPECT_EQ(matmul->fusions[2]->chain,
            (std::vector<const OpDef*>{matmul, relu_grad}));
}

TEST(OpRegistry, RegisterFusionsAddsEveryRule) {
  std::unique_ptr<OpRegistry> r = RegistryOfABC();
  const OpDef* a = &(*r->Lookup("A"))->def;
  const OpDef* b = &(*r->Lookup("B"))->def;
  const OpDef* c = &(*r->Lookup("C"))->def;
  std::vector<FusionRule> rules;
  rules.push_back(RuleOf({a, b}));
  rules.push_back(RuleOf({b, c}));
  ASSERT_TRUE(r->RegisterFusions(std::move(rules)).ok());
  EXPECT_EQ(a->fusions.size(), 1u);
  EXPECT_EQ(b->fusions.size(), 1u);
}

TEST(OpRegistry, RegisterFusionsAddsNoRuleWhenOneIsRefused) {
  std::unique_ptr<OpRegistry> r = RegistryOfABC();
  const OpDef* a = &(*r->Lookup("A"))->def;
  const OpDef* b = &(*r->Lookup("B"))->def;
  std::vector<FusionRule> rules;
  rules.push_back(RuleOf({a, b}));
  rules.push_back(RuleOf({b}));
  absl::Status s = r->RegisterFusions(std::move(rules));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("rule 1: a rule needs a chain"));
  EXPECT_TRUE(a->fusions.empty());
  EXPECT_TRUE(b->fusions.empty());
}

TEST(OpRegistry, TheCoreOpsCarryEveryFusionRuleOfOps) {
  const OpRegistry& r = GlobalOpRegistry();
  EXPECT_TRUE(r.fusion_rules_status().ok()) << r.fusion_rules_status();
  const OpDef& matmul = (*r.Lookup("MatMul"))->def;
  std::vector<FusionRule> defined = FusedMatMulRules(
      matmul, (*r.Lookup("BiasAdd"))->def, (*r.Lookup("Relu"))->def);
  defined.push_back(
      FusedMatMulReluGradRule(matmul, (*r.Lookup("ReluGrad"))->def));
  std::vector<std::vector<const OpDef*>> want;
  for (const FusionRule& rule : defined) want.push_back(rule.chain);
  std::vector<std::vector<const OpDef*>> carried;
  for (const auto& rule : matmul.fusions) carried.push_back(rule->chain);
  EXPECT_THAT(carried, UnorderedElementsAreArray(want));
}

TEST(OpRegistry, RegisterFusionRulesNamesAMissingOpAndAddsNothing) {
  OpRegistry r;
  RegisterMathOps(r);  // MatMul, but no BiasAdd, Relu or ReluGrad
  absl::Status s = RegisterFusionRules(r);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("RegisterFusionRules: op type 'BiasAdd'"));
  EXPECT_TRUE((*r.Lookup("MatMul"))->def.fusions.empty());
}

TEST(OpRegistry, TheCoreOpsAreAllRegistered) {
  EXPECT_TRUE(GlobalOpRegistry().builtin_ops_status().ok())
      << GlobalOpRegistry().builtin_ops_status();
}

TEST(OpRegistry, RegisterBuiltinKeepsTheFirstRefusalAndTheOtherOps) {
  OpRegistry r;
  RegisterMathOps(r);
  ASSERT_TRUE(r.builtin_ops_status().ok()) << r.builtin_ops_status();
  const size_t before = r.ListOps().size();
  RegisterMathOps(r);  // every type again: each refused, nothing aborts
  EXPECT_EQ(r.builtin_ops_status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(r.builtin_ops_status().message(), HasSubstr("RegisterBuiltin: "));
  EXPECT_EQ(r.ListOps().size(), before);
  EXPECT_TRUE(r.Lookup("MatMul").ok());
}

class BuildNodeTest : public ::testing::Test {
 protected:
  Graph g_;
};

TEST_F(BuildNodeTest, UnknownOpLeavesGraphUnchanged) {
  const int64_t before = g_.num_nodes();
  absl::StatusOr<NodeHandle> n = BuildNode(g_, "Frobnicate", "f", {}, {}, {});
  EXPECT_EQ(n.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(g_.num_nodes(), before);
}

TEST_F(BuildNodeTest, BadAttrTypeIsRejected) {
  Output x = ops::Placeholder(g_, DT_FLOAT, {2, 2}).value();
  const int64_t before = g_.num_nodes();
  absl::StatusOr<NodeHandle> n =
      BuildNode(g_, "MatMul", "mm", {x, x}, {}, {{"transpose_a", int64_t{1}}});
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      n.status().message(),
      HasSubstr(
          "MatMul 'mm': attribute 'transpose_a' must be a bool, got a int"));
  EXPECT_EQ(g_.num_nodes(), before);
}

TEST_F(BuildNodeTest, UnknownAttrIsRejectedButPrivateAttrsPass) {
  Output x = ops::Placeholder(g_, DT_FLOAT, {2}).value();
  EXPECT_THAT(
      BuildNode(g_, "Relu", "", {x}, {}, {{"alpha", 0.1f}}).status().message(),
      HasSubstr("unknown attribute 'alpha'"));
  EXPECT_TRUE(
      BuildNode(g_, "Relu", "", {x}, {}, {{"_class", std::string("a")}}).ok());
}

TEST_F(BuildNodeTest, MissingRequiredAttrIsRejected) {
  absl::StatusOr<NodeHandle> n = BuildNode(g_, "Placeholder", "p", {}, {}, {});
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(n.status().message(),
              HasSubstr("attribute 'dtype' (type) is missing"));
}

TEST_F(BuildNodeTest, WrongArityIsRejected) {
  Output x = ops::Placeholder(g_, DT_FLOAT, {2}).value();
  EXPECT_THAT(BuildNode(g_, "AddV2", "", {x}, {}, {}).status().message(),
              HasSubstr("takes 2 inputs, got 1"));
}

TEST_F(BuildNodeTest, FillsDefaultsAndInfersT) {
  Output x = ops::Placeholder(g_, DT_FLOAT, {2, 2}).value();
  NodeHandle n = BuildNode(g_, "MatMul", "", {x, x}, {}, {}).value();
  NodeInfo info = g_.Describe(n).value();
  EXPECT_EQ(GetAttr<DataType>(info.attrs, "T").value(), DT_FLOAT);
  EXPECT_FALSE(GetAttr<bool>(info.attrs, "transpose_a").value());
  EXPECT_EQ(info.op_def, &GlobalOpRegistry().Lookup("MatMul").value()->def);
}

TEST_F(BuildNodeTest, ConstantInputsBecomeNamedConstNodes) {
  Output x = ops::Placeholder(g_, DT_FLOAT, {2, 3}).value();
  NodeHandle n =
      BuildNode(g_, "Sum", "total", {x, Tensor::Scalar<int32_t>(1)}, {}, {})
          .value();
  NodeInfo info = g_.Describe(n).value();
  EXPECT_EQ(info.inputs[1].node_name(), "total/reduction_indices");
  EXPECT_EQ(info.output_shapes[0], TensorShape{2});
}

TEST_F(BuildNodeTest, InvalidNameCreatesNothing) {
  Output x = ops::Placeholder(g_, DT_FLOAT, {2, 3}).value();
  const int64_t before = g_.num_nodes();
  absl::StatusOr<NodeHandle> n = BuildNode(
      g_, "Sum", "bad//name", {x, Tensor::Scalar<int32_t>(1)}, {}, {});
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g_.num_nodes(), before);
}

TEST_F(BuildNodeTest, ControlInputOfAnotherGraphIsRejected) {
  Graph other;
  Output c = ops::Const(other, 1.f).value();
  EXPECT_THAT(
      BuildNode(g_, "NoOp", "", {}, {c.handle()}, {}).status().message(),
      HasSubstr("control input 0 belongs to another graph"));
}

TEST_F(BuildNodeTest, VariadicNMustMatch) {
  Output x = ops::Placeholder(g_, DT_FLOAT, {2}).value();
  EXPECT_TRUE(BuildNode(g_, "AddN", "", {x, x, x}, {}, {}).ok());
  EXPECT_THAT(BuildNode(g_, "AddN", "", {x, x}, {}, {{"N", int64_t{3}}})
                  .status()
                  .message(),
              HasSubstr("attribute N is 3 but 2 inputs"));
}

TEST(OpRegistry, DifferentiableOpsHaveGradients) {
  for (const char* op : {"Identity",
                         "MatMul",
                         "BiasAdd",
                         "BiasAddGrad",
                         "AddV2",
                         "AddN",
                         "Sub",
                         "Mul",
                         "RealDiv",
                         "Neg",
                         "Square",
                         "Sqrt",
                         "Maximum",
                         "Minimum",
                         "Relu",
                         "ReluGrad",
                         "Sigmoid",
                         "Tanh",
                         "Softmax",
                         "LogSoftmax",
                         "Log",
                         "Exp",
                         "SparseSoftmaxCrossEntropyWithLogits",
                         "Sum",
                         "Mean",
                         "Reshape",
                         "Cast",
                         "Transpose",
                         "Fill",
                         "ReadVariableOp"}) {
    EXPECT_TRUE(GlobalOpRegistry().Lookup(op).value()->def.gradient) << op;
  }
}

}  // namespace
}  // namespace graphgc
