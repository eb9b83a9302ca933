#include "ops/nn_ops.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ops/ops.h"
#include "runtime/session.h"
#include "tests/ops/kernel_test_util.h"

namespace graphgc {
namespace {

using ::testing::ElementsAre;
using testing::ExpectGradientMatches;
using testing::F;
using ::testing::HasSubstr;
using testing::KernelRunner;
using testing::RandomTensor;
using testing::Values;

class NnOpsTest : public ::testing::Test {
 protected:
  Output P(const TensorShape& shape, DataType dt = DT_FLOAT) {
    return ops::Placeholder(g_, dt, shape).value();
  }
  Output C(Tensor t) { return ops::Const(g_, std::move(t)).value(); }
  Graph g_;
  KernelRunner run_;
};

TEST_F(NnOpsTest, BiasAddAddsToEveryRow) {
  Output y =
      ops::BiasAdd(C(F({2, 2}, {1, 2, 3, 4})), C(F({2}, {10, 20}))).value();
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(11, 22, 13, 24));
}

// In a session the executor forwards an intermediate's buffer into BiasAdd,
// which then writes in place. Widths that are not a multiple of the packet
// size (and 16-lane AVX-512 widths) make the row's last packet overlap the
// one before; each element must still get its bias once.
TEST_F(NnOpsTest, BiasAddInPlaceAddsTheBiasOnceToEveryColumn) {
  for (int64_t c : {5, 6, 7, 9, 10, 13, 17, 19, 33}) {
    Graph g;
    Output p = ops::Placeholder(g, DT_FLOAT, {-1, c}).value();
    std::vector<float> bias_values(static_cast<size_t>(c));
    for (int64_t j = 0; j < c; ++j) bias_values[j] = 100.f * (j + 1);
    Output bias = ops::Const(g, F({c}, bias_values)).value();
    Output y = ops::BiasAdd(ops::Add(p, p).value(), bias).value();
    Tensor x = RandomTensor({3, c}, static_cast<uint32_t>(c));
    Session session(g);
    std::vector<Tensor> out = session.Run({{p, x}}, {y}).value();
    std::vector<float> got = Values(out[0]);
    std::vector<float> in = Values(x);
    ASSERT_EQ(got.size(), in.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], 2 * in[i] + bias_values[i % c])
          << "width " << c << ", element " << i;
    }
  }
}

TEST_F(NnOpsTest, BiasAddRejectsWrongBiasLength) {
  const int64_t before = g_.num_nodes();
  Output x = P({-1, 3});
  Output b = C(F({2}, {1, 2}));
  absl::StatusOr<Output> y = ops::BiasAdd(x, b, {.name = "dense/BiasAdd"});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(), HasSubstr("BiasAdd 'dense/BiasAdd'"));
  EXPECT_THAT(y.status().message(), HasSubstr("bias has 2 elements"));
  EXPECT_EQ(g_.num_nodes(), before + 2);
}

TEST_F(NnOpsTest, BiasAddGradSumsColumns) {
  Output y = ops::BiasAddGrad(C(F({3, 2}, {1, 2, 3, 4, 5, 6}))).value();
  EXPECT_EQ(y.shape(), TensorShape{2});
  EXPECT_THAT(Values(run_.Run1(y).value()), ElementsAre(9, 12));
}

// Rank 3 with a last dimension of 11: vectorised packets and a scalar tail,
// over 12 rows.
TEST_F(NnOpsTest, BiasAddAndBiasAddGradMatchALoopOnRankThree) {
  const Tensor x = RandomTensor({3, 4, 11}, 1);
  const Tensor bias = RandomTensor({11}, 2);
  const std::vector<float> xv = Values(x);
  const std::vector<float> bv = Values(bias);
  std::vector<float> sum(xv.size());
  std::vector<float> column_sums(11, 0.0f);
  for (size_t i = 0; i < xv.size(); ++i) {
    sum[i] = xv[i] + bv[i % 11];
    column_sums[i % 11] += xv[i];
  }
  const std::vector<float> y =
      Values(run_.Run1(ops::BiasAdd(C(x), C(bias)).value()).value());
  ASSERT_EQ(y.size(), sum.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], sum[i]) << i;
  const std::vector<float> g =
      Values(run_.Run1(ops::BiasAddGrad(C(x)).value()).value());
  ASSERT_EQ(g.size(), 11u);
  for (size_t j = 0; j < 11; ++j) EXPECT_NEAR(g[j], column_sums[j], 1e-5) << j;
}

// Widths below, at, between and above whole packets (of 4 or 8 floats):
// short rows, whole packets, and an overlapping last packet.
constexpr int64_t kRowWidths[] = {1, 3, 4, 7, 8, 10, 16, 17, 64, 70, 130};

TEST_F(NnOpsTest, BiasAddMatchesALoopForEveryRowWidth) {
  for (const int64_t c : kRowWidths) {
    const Tensor x = RandomTensor({5, c}, 3);
    const Tensor bias = RandomTensor({c}, 4);
    const std::vector<float> xv = Values(x);
    const std::vector<float> bv = Values(bias);
    const std::vector<float> y =
        Values(run_.Run1(ops::BiasAdd(C(x), C(bias)).value()).value());
    ASSERT_EQ(y.size(), xv.size()) << c;
    for (size_t i = 0; i < y.size(); ++i) {
      EXPECT_EQ(y[i], xv[i] + bv[i % c]) << "c " << c << ", element " << i;
    }
  }
}

// Beyond eight packets (130 columns) the sums come in chunks of eight.
TEST_F(NnOpsTest, BiasAddGradMatchesALoopForEveryRowWidth) {
  for (const int64_t c : kRowWidths) {
    const Tensor g = RandomTensor({33, c}, 5);
    const std::vector<float> gv = Values(g);
    std::vector<float> sums(c, 0.f);
    for (size_t i = 0; i < gv.size(); ++i) sums[i % c] += gv[i];
    const std::vector<float> out =
        Values(run_.Run1(ops::BiasAddGrad(C(g)).value()).value());
    ASSERT_EQ(out.size(), static_cast<size_t>(c));
    for (int64_t j = 0; j < c; ++j) {
      EXPECT_NEAR(out[j], sums[j], 1e-5) << "c " << c << ", column " << j;
    }
  }
}

TEST_F(NnOpsTest, ReluAndReluGrad) {
  Output x = C(F({4}, {-1, 0, 2, -3}));
  EXPECT_THAT(Values(run_.Run1(ops::Relu(x).value()).value()),
              ElementsAre(0, 0, 2, 0));
  Output g = ops::ReluGrad(C(F({4}, {5, 6, 7, 8})), x).value();
  EXPECT_THAT(Values(run_.Run1(g).value()), ElementsAre(0, 0, 7, 0));
}

TEST_F(NnOpsTest, SoftmaxIsStableForLargeLogits) {
  Output y = ops::Softmax(C(F({2, 3}, {1000, 1001, 1002, -5, -5, -5}))).value();
  std::vector<float> v = Values(run_.Run1(y).value());
  const double z = 1 + std::exp(1.0) + std::exp(2.0);
  EXPECT_NEAR(v[0], 1 / z, 1e-6);
  EXPECT_NEAR(v[1], std::exp(1.0) / z, 1e-6);
  EXPECT_NEAR(v[2], std::exp(2.0) / z, 1e-6);
  for (int i = 3; i < 6; ++i) EXPECT_NEAR(v[i], 1.0 / 3, 1e-6);
}

TEST_F(NnOpsTest, LogSoftmaxIsStableForLargeLogits) {
  Output y = ops::LogSoftmax(C(F({1, 3}, {1000, 1001, 1002}))).value();
  std::vector<float> v = Values(run_.Run1(y).value());
  const double lz = std::log(1 + std::exp(1.0) + std::exp(2.0));
  EXPECT_NEAR(v[0], -lz, 1e-5);
  EXPECT_NEAR(v[1], 1 - lz, 1e-5);
  EXPECT_NEAR(v[2], 2 - lz, 1e-5);
  for (float x : v) EXPECT_TRUE(std::isfinite(x));
}

TEST_F(NnOpsTest, SparseXentLossAndBackprop) {
  Output logits = C(F({2, 3}, {1, 2, 3, 1000, 0, 0}));
  Output labels = C(testing::I32({2}, {2, 1}));
  ops::SoftmaxCrossEntropyOutputs x =
      ops::SparseSoftmaxCrossEntropyWithLogits(logits, labels).value();
  EXPECT_EQ(x.loss.shape(), TensorShape{2});
  EXPECT_EQ(x.backprop.shape(), (TensorShape{2, 3}));
  std::vector<Tensor> out = run_.Run({x.loss, x.backprop}).value();
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  std::vector<float> loss = Values(out[0]);
  EXPECT_NEAR(loss[0], std::log(z) - 3, 1e-5);
  EXPECT_NEAR(loss[1], 1000, 1e-2);  // -log softmax = 1000 - 0
  std::vector<float> back = Values(out[1]);
  EXPECT_NEAR(back[0], std::exp(1.0) / z, 1e-6);
  EXPECT_NEAR(back[2], std::exp(3.0) / z - 1, 1e-6);
  EXPECT_NEAR(back[3], 1, 1e-6);
  EXPECT_NEAR(back[4], -1, 1e-6);
}

TEST_F(NnOpsTest, SparseXentMatchesAReferenceOnBatchesOfOddSizes) {
  // Rows and classes that fill no packet evenly, and one batch of a single
  // row, against a per-row double-precision log-sum-exp.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-20.f, 20.f);
  for (auto [rows, classes] : {std::pair<int64_t, int64_t>{1, 10},
                               {13, 11},
                               {32, 10},
                               {9, 1},
                               {40, 17}}) {
    std::vector<float> x(rows * classes);
    for (float& v : x) v = u(rng);
    std::vector<int32_t> y(rows);
    for (int64_t i = 0; i < rows; ++i) y[i] = static_cast<int32_t>(i % classes);
    ops::SoftmaxCrossEntropyOutputs xent =
        ops::SparseSoftmaxCrossEntropyWithLogits(C(F({rows, classes}, x)),
                                                 C(testing::I32({rows}, y)))
            .value();
    std::vector<Tensor> out = run_.Run({xent.loss, xent.backprop}).value();
    std::vector<float> loss = Values(out[0]);
    std::vector<float> back = Values(out[1]);
    for (int64_t i = 0; i < rows; ++i) {
      const float* row = x.data() + i * classes;
      const double max = *std::max_element(row, row + classes);
      double z = 0;
      for (int64_t j = 0; j < classes; ++j) z += std::exp(row[j] - max);
      EXPECT_NEAR(loss[i], std::log(z) - (row[y[i]] - max), 1e-5)
          << rows << "x" << classes << " row " << i;
      for (int64_t j = 0; j < classes; ++j) {
        const double want = std::exp(row[j] - max) / z - (j == y[i] ? 1 : 0);
        EXPECT_NEAR(back[i * classes + j], want, 1e-6)
            << rows << "x" << classes << " (" << i << ", " << j << ")";
      }
    }
  }
}

TEST_F(NnOpsTest, SparseXentReadsInt64LabelsAsInt32Ones) {
  Tensor logits = F({2, 3}, {1, 2, 3, -1, 5, 0});
  Output with32 = ops::SparseSoftmaxCrossEntropyWithLogits(
                      C(logits), C(testing::I32({2}, {0, 1})))
                      .value()
                      .backprop;
  Output with64 =
      ops::SparseSoftmaxCrossEntropyWithLogits(
          C(logits),
          C(Tensor::FromData<int64_t>({2}, std::vector<int64_t>{0, 1}).value()))
          .value()
          .backprop;
  std::vector<Tensor> out = run_.Run({with32, with64}).value();
  EXPECT_EQ(Values(out[0]), Values(out[1]));
  EXPECT_LT(Values(out[1])[0], 0);  // the label's entry is p - 1
}

TEST_F(NnOpsTest, SparseXentLabelOutOfRangeNamesLabelAndRow) {
  Output labels = P({-1}, DT_INT32);
  ops::SoftmaxCrossEntropyOutputs x =
      ops::SparseSoftmaxCrossEntropyWithLogits(C(F({2, 3}, {1, 2, 3, 4, 5, 6})),
                                               labels, {.name = "xent"})
          .value();
  absl::StatusOr<Tensor> r =
      run_.Run1(x.loss, {{labels, testing::I32({2}, {0, 3})}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("xent"));
  EXPECT_THAT(r.status().message(), HasSubstr("label 3 at row 1"));
}

TEST_F(NnOpsTest, SparseXentBatchMismatchIsBuildError) {
  absl::StatusOr<ops::SoftmaxCrossEntropyOutputs> x =
      ops::SparseSoftmaxCrossEntropyWithLogits(P({2, 3}), P({3}, DT_INT32));
  EXPECT_EQ(x.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(x.status().message(), HasSubstr("2 rows but labels have 3"));
}

TEST_F(NnOpsTest, Gradients) {
  Output x = P({3, 4});
  testing::Feeds feeds = {{x, RandomTensor({3, 4}, 21, -2.f, 2.f)}};
  ExpectGradientMatches(ops::Relu(x).value(), feeds, 0);
  ExpectGradientMatches(ops::Softmax(x).value(), feeds, 0);
  ExpectGradientMatches(ops::LogSoftmax(x).value(), feeds, 0);
  ExpectGradientMatches(ops::BiasAddGrad(x).value(), feeds, 0);
  Output b = P({4});
  testing::Feeds fb = {feeds[0], {b, RandomTensor({4}, 22)}};
  Output y = ops::BiasAdd(x, b).value();
  ExpectGradientMatches(y, fb, 0);
  ExpectGradientMatches(y, fb, 1);
  Output g = P({3, 4});
  testing::Feeds fg = {feeds[0], {g, RandomTensor({3, 4}, 23)}};
  ExpectGradientMatches(ops::ReluGrad(g, x).value(), fg, 0);
}

TEST_F(NnOpsTest, SparseXentGradient) {
  Output x = P({3, 4});
  Output labels = C(testing::I32({3}, {0, 3, 1}));
  ops::SoftmaxCrossEntropyOutputs xent =
      ops::SparseSoftmaxCrossEntropyWithLogits(x, labels).value();
  ExpectGradientMatches(xent.loss, {{x, RandomTensor({3, 4}, 24, -2.f, 2.f)}},
                        0);
}

}  // namespace
}  // namespace graphgc
