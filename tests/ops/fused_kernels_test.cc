#include "ops/fused_kernels.h"

#include <cmath>
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

Tensor Values(int64_t rows, int64_t cols, float scale) {
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (i % 13) - 0.6f;
  return Tensor::FromData<float>({rows, cols}, v).value();
}

class FusedMatMulTest : public ::testing::Test {
 protected:
  // Runs the fused kernel on (a, b, bias) as the step of a Relu node.
  absl::StatusOr<Tensor> Run(const FusedMatMulSpec& spec, const Tensor& a,
                             const Tensor& b, const Tensor& bias) {
    Output x = ops::Placeholder(g_, DT_FLOAT, {-1, -1}).value();
    Output relu = ops::Relu(x).value();
    const NodeView node(relu);
    const Tensor* in[3] = {&a, &b, &bias};
    NodeResource* resources[3] = {nullptr, nullptr, nullptr};
    OpKernelContext ctx(node, in, resources, &device_, 1);
    absl::Status s = BindFusedMatMul(spec)(ctx);
    if (!s.ok()) return s;
    return ctx.outputs()[0];
  }

  Graph g_;
  Eigen::ThreadPool pool_{1};
  Eigen::ThreadPoolDevice device_{&pool_, 1};
};

TEST_F(FusedMatMulTest, ComputesTheActivationOfEachTransposedProductPlusBias) {
  const int64_t m = 5, k = 7, n = 19;
  const Tensor bias = Values(1, n, 0.1f).Reshaped({n}).value();
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (FusedActivation act :
           {FusedActivation::kNone, FusedActivation::kRelu}) {
        const Tensor a = ta ? Values(k, m, 0.2f) : Values(m, k, 0.2f);
        const Tensor b = tb ? Values(n, k, 0.15f) : Values(k, n, 0.15f);
        absl::StatusOr<Tensor> out =
            Run({.transpose_a = ta, .transpose_b = tb, .activation = act}, a, b,
                bias);
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ(out->shape(), (TensorShape{m, n}));
        const auto av = a.data<float>(), bv = b.data<float>();
        const auto ov = out->data<float>(), biasv = bias.data<float>();
        int negatives = 0;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double sum = biasv[j];
            for (int64_t q = 0; q < k; ++q) {
              sum += double{av[ta ? q * m + i : i * k + q]} *
                     bv[tb ? j * k + q : q * n + j];
            }
            negatives += sum < 0;
            if (act == FusedActivation::kRelu) sum = std::max(sum, 0.0);
            EXPECT_NEAR(ov[i * n + j], sum, 1e-5)
                << "ta " << ta << " tb " << tb << " at " << i << "," << j;
          }
        }
        EXPECT_GT(negatives, 0);  // so the activation had work to do
      }
    }
  }
}

TEST_F(FusedMatMulTest, InnerDimensionsThatDifferAreRefusedNamingTheMatMul) {
  absl::StatusOr<Tensor> out =
      Run({.matmul_name = "dense/MatMul"}, Values(2, 3, 1), Values(4, 5, 1),
          Values(1, 5, 1).Reshaped({5}).value());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(
      out.status().message(), "MatMul 'dense/MatMul': inner dimensions 3 vs 4"))
      << out.status();
}

TEST_F(FusedMatMulTest, ABiasOfAnotherLengthIsRefusedNamingTheBiasAdd) {
  absl::StatusOr<Tensor> out =
      Run({.bias_add_name = "dense/BiasAdd"}, Values(2, 3, 1), Values(3, 5, 1),
          Values(1, 4, 1).Reshaped({4}).value());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "BiasAdd 'dense/BiasAdd': bias of shape"))
      << out.status();
}

// Runs the fused MatMul -> ReluGrad kernel on (a, b, features).
absl::StatusOr<Tensor> RunReluGrad(const FusedMatMulReluGradSpec& spec,
                                   const Tensor& a, const Tensor& b,
                                   const Tensor& features) {
  Graph g;
  Output x = ops::Placeholder(g, DT_FLOAT, {-1, -1}).value();
  const NodeView node(ops::Relu(x).value());
  Eigen::ThreadPool pool(1);
  Eigen::ThreadPoolDevice device(&pool, 1);
  const Tensor* in[3] = {&a, &b, &features};
  NodeResource* resources[3] = {nullptr, nullptr, nullptr};
  OpKernelContext ctx(node, in, resources, &device, 1);
  absl::Status s = BindFusedMatMulReluGrad(spec)(ctx);
  if (!s.ok()) return s;
  return ctx.outputs()[0];
}

TEST(FusedMatMulReluGrad,
     MasksEachTransposedProductWhereTheFeatureIsNotAbove0) {
  const int64_t m = 5, k = 7, n = 19;
  Tensor features = Values(m, n, 0.1f);
  features.mutable_data<float>()[3] = std::nanf("");
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Tensor a = ta ? Values(k, m, 0.2f) : Values(m, k, 0.2f);
      const Tensor b = tb ? Values(n, k, 0.15f) : Values(k, n, 0.15f);
      absl::StatusOr<Tensor> out =
          RunReluGrad({.transpose_a = ta, .transpose_b = tb}, a, b, features);
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->shape(), (TensorShape{m, n}));
      const auto av = a.data<float>(), bv = b.data<float>();
      const auto ov = out->data<float>(), fv = features.data<float>();
      int masked = 0;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t q = 0; q < k; ++q) {
            sum += double{av[ta ? q * m + i : i * k + q]} *
                   bv[tb ? j * k + q : q * n + j];
          }
          const bool pass = fv[i * n + j] > 0;
          masked += !pass;
          EXPECT_NEAR(ov[i * n + j], pass ? sum : 0.0, 1e-5)
              << "ta " << ta << " tb " << tb << " at " << i << "," << j;
        }
      }
      EXPECT_GT(masked, 1);  // the NaN and some values not above 0
    }
  }
}

TEST(FusedMatMulReluGrad, FeaturesOfAnotherShapeAreRefusedNamingTheReluGrad) {
  absl::StatusOr<Tensor> out =
      RunReluGrad({.relu_grad_name = "gradients/ReluGrad"}, Values(2, 3, 1),
                  Values(3, 5, 1), Values(2, 4, 1));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "ReluGrad 'gradients/ReluGrad': gradients"))
      << out.status();
}

// The rules of FusedMatMulRules over the global registry's OpDefs.
std::vector<FusionRule> CoreRules() {
  const OpRegistry& r = GlobalOpRegistry();
  return FusedMatMulRules((*r.Lookup("MatMul"))->def,
                          (*r.Lookup("BiasAdd"))->def,
                          (*r.Lookup("Relu"))->def);
}

TEST(FusedMatMulRules, BindAFloatChain) {
  const AttrMap matmul{{"T", DT_FLOAT}, {"transpose_b", true}};
  const AttrMap bias_add{{"T", DT_FLOAT}}, relu{{"T", DT_FLOAT}};
  const FusedNode nodes[3] = {
      {"mm", &matmul}, {"ba", &bias_add}, {"relu", &relu}};
  std::vector<FusionRule> rules = CoreRules();
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_TRUE(static_cast<bool>(rules[0].bind(nodes)));
  EXPECT_TRUE(static_cast<bool>(rules[1].bind(absl::MakeSpan(nodes, 2))));
}

TEST(FusedMatMulRules, LeaveAChainOfAnotherDtypeUnfused) {
  const AttrMap matmul{{"T", DT_DOUBLE}}, bias_add{{"T", DT_DOUBLE}};
  const FusedNode nodes[2] = {{"mm", &matmul}, {"ba", &bias_add}};
  EXPECT_FALSE(static_cast<bool>(CoreRules()[1].bind(nodes)));
}

}  // namespace
}  // namespace graphgc
