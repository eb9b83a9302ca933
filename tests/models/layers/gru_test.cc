// models/layers/gru.cc through the public API: shapes, values against
// Keras's GRU equations (reset_after true and false), go_backwards,
// Summary, the gradient, save/load in Keras's layout and refusals.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/recurrent_layers.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "nlohmann/json.hpp"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "serialize/keras_weights.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/numeric_gradient.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using testing_internal::FloatValues;

Tensor Values(std::vector<int64_t> dims, int seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) {
    v.push_back(static_cast<float>((i * 5 + seed) % 11) / 5.f - 1.f);
  }
  return Tensor::FromData<float>(TensorShape(dims), v).value();
}

double Sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

// Keras's GRUCell over the steps of x [batch, steps, features] (in reverse
// with `backwards`) from a zero state: every step's h, in the order run.
// `bias` is [2, 3u] with reset_after, else [3u].
std::vector<float> Reference(const Tensor &x, const Tensor &kernel,
                             const Tensor &recurrent, const Tensor &bias,
                             bool reset_after, bool backwards) {
  const std::vector<float> xv = FloatValues(x), k = FloatValues(kernel),
                           r = FloatValues(recurrent), b = FloatValues(bias);
  const int64_t batch = x.shape()[0], steps = x.shape()[1], in = x.shape()[2],
                u = recurrent.shape()[0], w = 3 * u;
  std::vector<float> out(batch * steps * u);
  for (int64_t n = 0; n < batch; ++n) {
    std::vector<double> h(u, 0);
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = backwards ? steps - 1 - s : s;
      std::vector<double> xz(w), inner(w);
      for (int64_t j = 0; j < w; ++j) {
        double a = b[j], c = reset_after ? b[w + j] : 0;
        for (int64_t f = 0; f < in; ++f) {
          a += xv[(n * steps + t) * in + f] * k[f * w + j];
        }
        for (int64_t q = 0; q < u; ++q) c += h[q] * r[q * w + j];
        xz[j] = a;
        inner[j] = c;
      }
      std::vector<double> next(u);
      for (int64_t j = 0; j < u; ++j) {
        const double z = Sigmoid(xz[j] + inner[j]);
        const double rg = Sigmoid(xz[u + j] + inner[u + j]);
        double rh = 0;
        if (reset_after) {
          rh = rg * inner[2 * u + j];
        } else {
          for (int64_t q = 0; q < u; ++q) {
            rh +=
                Sigmoid(xz[u + q] + inner[u + q]) * h[q] * r[q * w + 2 * u + j];
          }
        }
        const double hh = std::tanh(xz[2 * u + j] + rh);
        next[j] = z * h[j] + (1 - z) * hh;
      }
      h = next;
      for (int64_t j = 0; j < u; ++j) {
        out[(n * steps + s) * u + j] = static_cast<float>(h[j]);
      }
    }
  }
  return out;
}

class GRUTest : public ::testing::Test {
 protected:
  Graph g_;
};

TEST_F(GRUTest, OutputsTheLastStateOrEveryStepWithReturnSequences) {
  Graph g1, g2;
  absl::StatusOr<Sequential> last = Sequential::Create(
      {layers::Input({7, 3}), layers::GRU(4)}, {.graph = &g1});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->Predict(Values({2, 7, 3}, 0)).value().shape(),
            TensorShape({2, 4}));
  absl::StatusOr<Sequential> all = Sequential::Create(
      {layers::Input({7, 3}), layers::GRU(4, {.return_sequences = true})},
      {.graph = &g2});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->Predict(Values({2, 7, 3}, 0)).value().shape(),
            TensorShape({2, 7, 4}));
}

TEST_F(GRUTest, MatchesKerasEquationsOnSetWeights) {
  for (const bool reset_after : {true, false}) {
    for (const bool backwards : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "reset_after " << reset_after
                                        << " go_backwards " << backwards);
      Graph g;
      absl::StatusOr<Sequential> m = Sequential::Create(
          {layers::Input({3, 4}), layers::GRU(5, {.reset_after = reset_after,
                                                  .return_sequences = true,
                                                  .go_backwards = backwards})},
          {.graph = &g});
      ASSERT_TRUE(m.ok()) << m.status();
      const Tensor kernel = Values({4, 15}, 1), recurrent = Values({5, 15}, 2);
      const Tensor bias = reset_after ? Values({2, 15}, 3) : Values({15}, 3);
      ASSERT_TRUE(m->SetWeights({kernel, recurrent, bias}).ok());
      const Tensor x = Values({2, 3, 4}, 5);
      EXPECT_THAT(FloatValues(m->Predict(x).value()),
                  ::testing::Pointwise(::testing::FloatNear(1e-5),
                                       Reference(x, kernel, recurrent, bias,
                                                 reset_after, backwards)));
    }
  }
}

TEST_F(GRUTest, SummaryCountsKerasParameters) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({80, 64}), layers::GRU(64)}, {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  EXPECT_THAT(s, HasSubstr("gru (GRU)"));
  // 3 * 64 * (64 + 64 + 2): reset_after's two biases.
  EXPECT_THAT(s, HasSubstr("Total params: 24,960"));
}

TEST_F(GRUTest, AFitStepFollowsTheNumericalGradient) {
  for (const bool reset_after : {true, false}) {
    SCOPED_TRACE(reset_after);
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({3, 2}),
         layers::GRU(3, {.reset_after = reset_after, .seed = 1}),
         layers::Dense(1, {.seed = 2})},
        {.graph = &g});
    ASSERT_TRUE(m.ok()) << m.status();
    std::vector<Tensor> w = m->GetWeights();
    w[2] = reset_after ? Values({2, 9}, 4) : Values({9}, 4);
    ASSERT_TRUE(m->SetWeights(w).ok());
    const float lr = 1e-2f;
    ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                            .loss = losses::MeanSquaredError()})
                    .ok());
    testing_internal::ExpectSgdStepFollowsNumericalGradient(
        *m, Values({2, 3, 2}, 2),
        Tensor::FromData<float>({2, 1}, std::vector<float>{1, -1}).value(), lr);
  }
}

TEST_F(GRUTest, SaveWritesKerasConfigAndCellWeightsAndLoadsBack) {
  const std::string dir = TestTempPath();
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({3, 4}), layers::GRU(5, {.go_backwards = true})},
      {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const Tensor bias = Values({2, 15}, 3);
  ASSERT_TRUE(
      m->SetWeights({Values({4, 15}, 1), Values({5, 15}, 2), bias}).ok());
  ASSERT_TRUE(m->Save(dir).ok());
  const Json config = Json::parse(ReadFileBytes(dir + "/config.json"));
  const Json &layer = config["config"]["layers"][1];
  EXPECT_EQ(layer["class_name"], "GRU");
  EXPECT_EQ(layer["config"]["units"], 5);
  EXPECT_EQ(layer["config"]["reset_after"], true);
  EXPECT_EQ(layer["config"]["go_backwards"], true);
  absl::StatusOr<std::vector<std::vector<Tensor>>> saved = DecodeKerasWeights(
      ReadFileBytes(dir + "/model.weights.h5"),
      {{.path = "layers/gru/cell", .shapes = {{4, 15}, {5, 15}, {2, 15}}}},
      "model.weights.h5");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(FloatValues((*saved)[0][2]), FloatValues(bias));
  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Tensor x = Values({2, 3, 4}, 9);
  EXPECT_EQ(FloatValues(loaded->Predict(x).value()),
            FloatValues(m->Predict(x).value()));
}

TEST_F(GRUTest, UnimplementedArgumentsAreRefusedNamingThem) {
  struct Bad {
    GRUOptions options;
    const char *what;
  };
  for (const Bad &bad : {Bad{{.return_state = true}, "return_state=True"},
                         Bad{{.dropout = 0.5f}, "dropout=0.5"}}) {
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({3, 4}), layers::GRU(5, bad.options)}, {.graph = &g});
    ASSERT_FALSE(m.ok()) << bad.what;
    EXPECT_THAT(m.status().message(), HasSubstr(bad.what));
  }
}

}  // namespace
}  // namespace graphgc
