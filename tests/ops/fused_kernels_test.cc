#include "ops/fused_kernels.h"

#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
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

}  // namespace
}  // namespace graphgc
