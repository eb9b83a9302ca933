// models/layers/lstm.cc through the public API: shapes, values against
// Keras's LSTM equations, go_backwards, the initial weights, Summary, the
// gradient, save/load in Keras's layout and refusals.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/recurrent_layers.h"
#include "models/saving.h"
#include "models/saving_access.h"
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
    v.push_back(static_cast<float>((i * 7 + seed) % 13) / 6.f - 1.f);
  }
  return Tensor::FromData<float>(TensorShape(dims), v).value();
}

double Sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

// Keras's LSTMCell over the steps of x [batch, steps, features] (in reverse
// with `backwards`) from zero states: every step's h, in the order run.
std::vector<float> Reference(const Tensor &x, const Tensor &kernel,
                             const Tensor &recurrent, const Tensor &bias,
                             bool backwards) {
  const std::vector<float> xv = FloatValues(x), k = FloatValues(kernel),
                           r = FloatValues(recurrent), b = FloatValues(bias);
  const int64_t batch = x.shape()[0], steps = x.shape()[1], in = x.shape()[2],
                u = recurrent.shape()[0];
  std::vector<float> out(batch * steps * u);
  for (int64_t n = 0; n < batch; ++n) {
    std::vector<double> h(u, 0), c(u, 0);
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = backwards ? steps - 1 - s : s;
      std::vector<double> z(4 * u);
      for (int64_t j = 0; j < 4 * u; ++j) {
        double acc = b[j];
        for (int64_t f = 0; f < in; ++f) {
          acc += xv[(n * steps + t) * in + f] * k[f * 4 * u + j];
        }
        for (int64_t q = 0; q < u; ++q) acc += h[q] * r[q * 4 * u + j];
        z[j] = acc;
      }
      for (int64_t j = 0; j < u; ++j) {
        const double i = Sigmoid(z[j]), f = Sigmoid(z[u + j]),
                     g = std::tanh(z[2 * u + j]), o = Sigmoid(z[3 * u + j]);
        c[j] = f * c[j] + i * g;
        h[j] = o * std::tanh(c[j]);
        out[(n * steps + s) * u + j] = static_cast<float>(h[j]);
      }
    }
  }
  return out;
}

// The last step's h of each sample of a Reference.
std::vector<float> LastSteps(const std::vector<float> &all, int64_t batch,
                             int64_t steps, int64_t u) {
  std::vector<float> out;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t j = 0; j < u; ++j) {
      out.push_back(all[(n * steps + steps - 1) * u + j]);
    }
  }
  return out;
}

class LSTMTest : public ::testing::Test {
 protected:
  // A model Input(3, 4) -> LSTM(5, options) with set random weights.
  Sequential Model(LSTMOptions options) {
    options.seed = 7;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({3, 4}), layers::LSTM(5, options)}, {.graph = &g_});
    EXPECT_TRUE(m.ok()) << m.status();
    kernel_ = Values({4, 20}, 1);
    recurrent_ = Values({5, 20}, 2);
    bias_ = Values({20}, 3);
    EXPECT_TRUE(m->SetWeights({kernel_, recurrent_, bias_}).ok());
    return *m;
  }
  Graph g_;
  Tensor kernel_, recurrent_, bias_;
};

TEST_F(LSTMTest, OutputsTheLastStateOrEveryStepWithReturnSequences) {
  Graph g1, g2;
  absl::StatusOr<Sequential> last = Sequential::Create(
      {layers::Input({80, 64}), layers::LSTM(16)}, {.graph = &g1});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->Predict(Values({2, 80, 64}, 0)).value().shape(),
            TensorShape({2, 16}));
  absl::StatusOr<Sequential> all = Sequential::Create(
      {layers::Input({80, 64}), layers::LSTM(16, {.return_sequences = true})},
      {.graph = &g2});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->Predict(Values({2, 80, 64}, 0)).value().shape(),
            TensorShape({2, 80, 16}));
}

TEST_F(LSTMTest, MatchesKerasEquationsOnSetWeights) {
  Sequential m = Model({.return_sequences = true});
  const Tensor x = Values({2, 3, 4}, 5);
  const std::vector<float> want =
      Reference(x, kernel_, recurrent_, bias_, false);
  EXPECT_THAT(FloatValues(m.Predict(x).value()),
              ::testing::Pointwise(::testing::FloatNear(1e-5), want));
  Graph g;
  absl::StatusOr<Sequential> last = Sequential::Create(
      {layers::Input({3, 4}), layers::LSTM(5)}, {.graph = &g});
  ASSERT_TRUE(last.ok()) << last.status();
  ASSERT_TRUE(last->SetWeights({kernel_, recurrent_, bias_}).ok());
  EXPECT_THAT(FloatValues(last->Predict(x).value()),
              ::testing::Pointwise(::testing::FloatNear(1e-5),
                                   LastSteps(want, 2, 3, 5)));
}

TEST_F(LSTMTest, GoBackwardsRunsTheStepsInReverseAndReturnsThemInThatOrder) {
  Sequential m = Model({.return_sequences = true, .go_backwards = true});
  const Tensor x = Values({2, 3, 4}, 5);
  EXPECT_THAT(
      FloatValues(m.Predict(x).value()),
      ::testing::Pointwise(::testing::FloatNear(1e-5),
                           Reference(x, kernel_, recurrent_, bias_, true)));
}

TEST_F(LSTMTest, UnitForgetBiasStartsTheForgetGateBiasAtOne) {
  for (const bool unit_forget_bias : {true, false}) {
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({3, 4}),
         layers::LSTM(5, {.unit_forget_bias = unit_forget_bias})},
        {.graph = &g});
    ASSERT_TRUE(m.ok()) << m.status();
    std::vector<float> want(20, 0.f);
    if (unit_forget_bias) {
      for (int j = 5; j < 10; ++j) want[j] = 1.f;
    }
    EXPECT_EQ(FloatValues(m->GetWeights()[2]), want);
  }
}

TEST_F(LSTMTest, RecurrentKernelStartsWithOrthonormalRows) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({3, 4}), layers::LSTM(5, {.seed = 3})}, {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const Tensor r = m->GetWeights()[1];
  ASSERT_EQ(r.shape(), TensorShape({5, 20}));
  const std::vector<float> v = FloatValues(r);
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 5; ++b) {
      double dot = 0;
      for (int j = 0; j < 20; ++j) dot += v[a * 20 + j] * v[b * 20 + j];
      EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-5) << a << ", " << b;
    }
  }
}

TEST_F(LSTMTest, SummaryCountsKerasParameters) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({80, 64}), layers::LSTM(64)}, {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string s = m->Summary();
  EXPECT_THAT(s, HasSubstr("lstm (LSTM)"));
  EXPECT_THAT(s, HasSubstr("(None, 64)"));
  // 4 * 64 * (64 + 64 + 1).
  EXPECT_THAT(s, HasSubstr("Total params: 33,024"));
}

TEST_F(LSTMTest, AFitStepFollowsTheNumericalGradient) {
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({3, 2}), layers::LSTM(3, {.seed = 1}),
                          layers::Dense(1, {.seed = 2})},
                         {.graph = &g_});
  ASSERT_TRUE(m.ok()) << m.status();
  // A bias away from its initial zeros, so every gate's slice matters.
  std::vector<Tensor> w = m->GetWeights();
  w[2] = Values({12}, 4);
  ASSERT_TRUE(m->SetWeights(w).ok());
  const float lr = 1e-2f;
  ASSERT_TRUE(m->Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                          .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      *m, Values({2, 3, 2}, 2),
      Tensor::FromData<float>({2, 1}, std::vector<float>{1, -1}).value(), lr);
}

TEST_F(LSTMTest, SaveWritesKerasConfigAndCellWeightsAndLoadsBack) {
  const std::string dir = TestTempPath();
  Sequential m = Model({.return_sequences = true, .go_backwards = true});
  ASSERT_TRUE(m.Save(dir).ok());
  const Json config = Json::parse(ReadFileBytes(dir + "/config.json"));
  const Json &layer = config["config"]["layers"][1];
  EXPECT_EQ(layer["class_name"], "LSTM");
  const Json &c = layer["config"];
  EXPECT_EQ(c["units"], 5);
  EXPECT_EQ(c["activation"], "tanh");
  EXPECT_EQ(c["recurrent_activation"], "sigmoid");
  EXPECT_EQ(c["return_sequences"], true);
  EXPECT_EQ(c["go_backwards"], true);
  EXPECT_EQ(c["unit_forget_bias"], true);
  EXPECT_EQ(c["recurrent_initializer"]["class_name"], "Orthogonal");
  // Keras keeps the weights in the layer's cell.
  absl::StatusOr<std::vector<std::vector<Tensor>>> saved = DecodeKerasWeights(
      ReadFileBytes(dir + "/model.weights.h5"),
      {{.path = "layers/lstm/cell", .shapes = {{4, 20}, {5, 20}, {20}}}},
      "model.weights.h5");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(FloatValues((*saved)[0][1]), FloatValues(recurrent_));
  Graph g2;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g2});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Tensor x = Values({2, 3, 4}, 9);
  EXPECT_EQ(FloatValues(loaded->Predict(x).value()),
            FloatValues(m.Predict(x).value()));
}

// Every Input dimension is known, so the layer's own check is asked
// directly through its kind, as a model would on (None, None, 4).
TEST_F(LSTMTest, UnknownTimestepsAreRefusedNamingTheLayer) {
  const Layer lstm = layers::LSTM(5, {.name = "rnn"});
  const models_internal::LayerKind *kind =
      models_internal::FindLayerKind("LSTM");
  ASSERT_NE(kind, nullptr);
  absl::StatusOr<TensorShape> out = kind->output_shape(
      *models_internal::SavingAccess::State(lstm), TensorShape({-1, 4}));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("LSTM 'rnn'"));
  EXPECT_THAT(out.status().message(), HasSubstr("known number of timesteps"));
}

TEST_F(LSTMTest, UnimplementedArgumentsAreRefusedNamingThem) {
  struct Bad {
    LSTMOptions options;
    const char *what;
  };
  for (const Bad &bad :
       {Bad{{.return_state = true}, "return_state=True"},
        Bad{{.dropout = 0.5f}, "dropout=0.5"},
        Bad{{.recurrent_dropout = 0.25f}, "recurrent_dropout=0.25"}}) {
    Graph g;
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input({3, 4}), layers::LSTM(5, bad.options)}, {.graph = &g});
    ASSERT_FALSE(m.ok()) << bad.what;
    EXPECT_THAT(m.status().message(), HasSubstr(bad.what));
  }
}

}  // namespace
}  // namespace graphgc
