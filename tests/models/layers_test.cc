#include "models/layers.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "serialize/graph_def.h"
#include "tests/testing/numeric_gradient.h"

namespace graphgc {
namespace {

Tensor Floats(TensorShape shape, std::vector<float> v) {
  return Tensor::FromData<float>(shape, v).value();
}

Tensor Ints(std::vector<int32_t> v) {
  return Tensor::FromData<int32_t>({static_cast<int64_t>(v.size())}, v).value();
}

std::vector<float> Values(const Tensor& t) {
  auto d = t.data<float>();
  return std::vector<float>(d.begin(), d.end());
}

void ExpectNear(const Tensor& t, const std::vector<float>& want) {
  std::vector<float> got = Values(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
  }
}

bool Mentions(const absl::Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

// The op type of the node named `name` in `g` ("" when there is none).
std::string OpOf(Graph& g, const std::string& name) {
  std::optional<NodeHandle> node = g.FindNode(name);
  if (!node.has_value()) return "";
  return g.Describe(*node).value().op;
}

// n samples of `shape` with values from a fixed stream.
Tensor RandomImages(int64_t n, std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  shape.insert(shape.begin(), n);
  TensorShape s(shape);
  std::vector<float> v(s.num_elements());
  for (float& x : v) x = u(rng);
  return Floats(s, v);
}

class LayersTest : public ::testing::Test {
 protected:
  Sequential Create(std::vector<Layer> layers) {
    return Sequential::Create(std::move(layers), {.graph = &g_}).value();
  }
  Graph g_;
};

// --- Layer handles ---

TEST(Layer, AMovedFromLayerIsEmpty) {
  Layer dense = layers::Dense(3, {.name = "out"});
  Layer taken = std::move(dense);
  EXPECT_EQ(dense.kind(), "");
  EXPECT_EQ(dense.name(), "");
  EXPECT_FALSE(dense.built());
  EXPECT_EQ(dense.units(), 0);
  EXPECT_FALSE(dense == taken);
  EXPECT_EQ(taken.kind(), "Dense");
  EXPECT_EQ(taken.name(), "out");
  EXPECT_EQ(taken.units(), 3);
}

TEST(Layer, CreateRefusesAMovedFromLayer) {
  Graph g;
  Layer dense = layers::Dense(3);
  Layer taken = std::move(dense);
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({4}), dense}, {.graph = &g});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("layer 1 is empty"), std::string::npos)
      << m.status();
  EXPECT_TRUE(
      Sequential::Create({layers::Input({4}), taken}, {.graph = &g}).ok());
}

// Two threads creating models over one unbuilt layer at once: it is built
// once (one scope, one set of variables) and both models read that build.
TEST_F(LayersTest, ASharedLayerBuiltByTwoThreadsAtOnceIsBuiltOnce) {
  for (int round = 0; round < 20; ++round) {
    Layer shared = layers::Dense(3, {.name = "shared"});
    std::vector<std::optional<Sequential>> models(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        models[t] = Create({layers::Input({2}), shared});
      });
    }
    for (std::thread& t : threads) t.join();
    ASSERT_TRUE(models[0].has_value() && models[1].has_value());
    ASSERT_EQ(models[0]->layers().size(), 2u);
    ASSERT_EQ(models[1]->layers().size(), 2u);
    ASSERT_TRUE(shared.built());
    EXPECT_EQ(models[0]->layers()[1].name(), shared.name());
    EXPECT_EQ(models[1]->layers()[1].name(), shared.name());
    std::vector<Tensor> a = models[0]->GetWeights();
    std::vector<Tensor> b = models[1]->GetWeights();
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(Values(a[0]), Values(b[0]));
  }
}

TEST_F(LayersTest, KindsAreKerasClassNamesAndNamesKerasDefaults) {
  std::vector<Layer> stack = {layers::Input({8, 8, 1}),
                              layers::Conv2D(2, {3, 3}),
                              layers::BatchNormalization(),
                              layers::Activation("relu"),
                              layers::MaxPooling2D({2, 2}),
                              layers::Reshape({9, 2}),
                              layers::Flatten(),
                              layers::Dropout(0.5f),
                              layers::Dense(2)};
  Create(stack);
  std::vector<std::pair<std::string, std::string>> got;
  for (const Layer& l : stack) got.emplace_back(l.kind(), l.name());
  std::vector<std::pair<std::string, std::string>> want = {
      {"InputLayer", "input"},
      {"Conv2D", "conv2d"},
      {"BatchNormalization", "batch_normalization"},
      {"Activation", "activation"},
      {"MaxPooling2D", "max_pooling2d"},
      {"Reshape", "reshape"},
      {"Flatten", "flatten"},
      {"Dropout", "dropout"},
      {"Dense", "dense"}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(stack[1].units(), 2);
  EXPECT_EQ(stack[0].units(), -1);  // not a rank-1 input
}

TEST_F(LayersTest, SecondLayersOfAKindGetUniquedNames) {
  Layer a = layers::Conv2D(1, {1, 1});
  Layer b = layers::Conv2D(1, {1, 1});
  Create({layers::Input({2, 2, 1}), a, b});
  EXPECT_EQ(a.name(), "conv2d");
  EXPECT_EQ(b.name(), "conv2d_1");
}

// --- Input ---

TEST_F(LayersTest, InputTakesImagesWithTheBatchDimensionLeftOut) {
  Sequential m = Create({layers::Input({8, 8, 1}), layers::Flatten()});
  EXPECT_EQ(OpOf(g_, "input"), "Placeholder");
  Tensor y = m.Predict(RandomImages(3, {8, 8, 1}, 1)).value();
  EXPECT_EQ(y.shape(), TensorShape({3, 64}));
}

TEST_F(LayersTest, ImagesOfAnotherShapeAreRefusedNamingBothShapes) {
  Sequential m = Create({layers::Input({8, 8, 1}), layers::Flatten()});
  absl::StatusOr<Tensor> y = m.Predict(RandomImages(3, {64}, 1));
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(y.status(), "[3,64]")) << y.status();
  EXPECT_TRUE(Mentions(y.status(), "[samples, 8, 8, 1]")) << y.status();
}

TEST_F(LayersTest, InputWithAnUnknownOrZeroSizeIsRefused) {
  for (TensorShape shape :
       {TensorShape({}), TensorShape({8, -1}), TensorShape({0, 3})}) {
    absl::StatusOr<Sequential> m = Sequential::Create(
        {layers::Input(shape), layers::Flatten()}, {.graph = &g_});
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument)
        << shape.DebugString();
  }
}

// --- Conv2D ---

TEST_F(LayersTest, Conv2DBuildsConv2DAndBiasAddOps) {
  Sequential m = Create({layers::Input({8, 8, 1}),
                         layers::Conv2D(8, {3, 3}, {.activation = "relu"})});
  EXPECT_EQ(OpOf(g_, "conv2d/Conv2D"), "Conv2D");
  EXPECT_EQ(OpOf(g_, "conv2d/BiasAdd"), "BiasAdd");
  EXPECT_EQ(OpOf(g_, "conv2d/Relu"), "Relu");
  EXPECT_EQ(m.Predict(RandomImages(2, {8, 8, 1}, 1)).value().shape(),
            TensorShape({2, 6, 6, 8}));
}

TEST_F(LayersTest,
       Conv2DKernelIsGlorotUniformOverItsReceptiveFieldAndBiasZeros) {
  Sequential m = Create(
      {layers::Input({5, 5, 2}), layers::Conv2D(16, {3, 3}, {.seed = 7})});
  std::vector<Tensor> w = m.GetWeights();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].shape(), TensorShape({3, 3, 2, 16}));
  EXPECT_EQ(w[1].shape(), TensorShape({16}));
  // fan_in = 3 * 3 * 2, fan_out = 3 * 3 * 16.
  const float limit = std::sqrt(6.f / (18 + 144));
  std::vector<float> k = Values(w[0]);
  const float max_abs =
      std::abs(*std::max_element(k.begin(), k.end(), [](float a, float b) {
        return std::abs(a) < std::abs(b);
      }));
  EXPECT_LE(max_abs, limit);
  EXPECT_GT(max_abs, 0.9f * limit);  // 288 draws reach near the bound
  EXPECT_EQ(Values(w[1]), std::vector<float>(16, 0.f));
}

TEST_F(LayersTest, Conv2DWithTheSameSeedStartsWithTheSameKernel) {
  Sequential a = Create(
      {layers::Input({4, 4, 1}), layers::Conv2D(2, {2, 2}, {.seed = 3})});
  Sequential b = Create(
      {layers::Input({4, 4, 1}), layers::Conv2D(2, {2, 2}, {.seed = 3})});
  EXPECT_EQ(Values(a.GetWeights()[0]), Values(b.GetWeights()[0]));
}

TEST_F(LayersTest, Conv2DComputesAStridedSamePaddedConvolution) {
  // 3x3 input, one channel; 2x2 kernel of ones at stride 2, SAME: TensorFlow
  // pads (2-1)*2+2-3 = 1 after (0 before), so windows at (0,0), (0,2),
  // (2,0), (2,2), the last row and column padded with zeros.
  Sequential m = Create(
      {layers::Input({3, 3, 1}),
       layers::Conv2D(1, {2, 2}, {.strides = {2, 2}, .padding = "same"})});
  ASSERT_TRUE(
      m.SetWeights({Floats({2, 2, 1, 1}, {1, 1, 1, 1}), Floats({1}, {0.5f})})
          .ok());
  Tensor y =
      m.Predict(Floats({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})).value();
  EXPECT_EQ(y.shape(), TensorShape({1, 2, 2, 1}));
  EXPECT_EQ(Values(y), (std::vector<float>{12.5f, 9.5f, 15.5f, 9.5f}));
}

TEST_F(LayersTest, Conv2DOnFlatInputsIsRefusedNamingTheLayerAndShape) {
  const int64_t nodes = g_.num_nodes();
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({10}), layers::Conv2D(2, {3, 3}, {.name = "c"})},
      {.graph = &g_});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(m.status(), "Conv2D 'c'")) << m.status();
  EXPECT_TRUE(Mentions(m.status(), "(None, 10)")) << m.status();
  EXPECT_TRUE(Mentions(m.status(), "(None, h, w, c)")) << m.status();
  EXPECT_EQ(g_.num_nodes(), nodes);
}

TEST_F(LayersTest, Conv2DKernelLargerThanItsInputIsRefusedWithValidPadding) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({2, 2, 1}), layers::Conv2D(2, {3, 3})}, {.graph = &g_});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(m.status(), "3x3 kernel")) << m.status();
  EXPECT_TRUE(Mentions(m.status(), "(None, 2, 2, 1)")) << m.status();
  EXPECT_TRUE(
      Sequential::Create({layers::Input({2, 2, 1}),
                          layers::Conv2D(2, {3, 3}, {.padding = "same"})},
                         {.graph = &g_})
          .ok());
}

TEST_F(LayersTest, ALayerBuiltForOtherImagesIsRefused) {
  Layer conv = layers::Conv2D(2, {2, 2});
  Create({layers::Input({4, 4, 1}), conv});
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({5, 5, 1}), conv}, {.graph = &g_});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(m.status(), "(None, 4, 4, 1)")) << m.status();
  EXPECT_TRUE(Mentions(m.status(), "(None, 5, 5, 1)")) << m.status();
}

TEST_F(LayersTest, BadImageLayerOptionsAreReportedAtCreate) {
  std::vector<std::pair<Layer, std::string>> bad = {
      {layers::Conv2D(0, {3, 3}), "filters"},
      {layers::Conv2D(2, {}), "kernel_size"},
      {layers::Conv2D(2, {3, 0}), "kernel_size"},
      {layers::Conv2D(2, {3, 3}, {.strides = {1, 1, 1}}), "strides"},
      {layers::Conv2D(2, {3, 3}, {.padding = "full"}), "padding"},
      {layers::Conv2D(2, {3, 3}, {.activation = "mish"}), "mish"},
      {layers::MaxPooling2D({2, 2}, {.strides = {0}}), "strides"},
      {layers::MaxPooling2D({2, 2}, {.padding = "SAME"}), "padding"},
      {layers::Dropout(1.f), "rate"},
      {layers::Dropout(-0.1f), "rate"},
      {layers::BatchNormalization({.momentum = 1.5f}), "momentum"},
      {layers::BatchNormalization({.epsilon = 0.f}), "epsilon"},
      {layers::Reshape({0, 2}), "target_shape"},
      {layers::Reshape({-1, -1}), "target_shape"},
      {layers::Activation("mish"), "mish"},
  };
  const int64_t nodes = g_.num_nodes();
  for (auto& [layer, what] : bad) {
    absl::StatusOr<Sequential> m =
        Sequential::Create({layers::Input({4, 4, 1}), layer}, {.graph = &g_});
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << what;
    EXPECT_TRUE(Mentions(m.status(), what)) << m.status();
    EXPECT_TRUE(Mentions(m.status(), layer.kind())) << m.status();
  }
  EXPECT_EQ(g_.num_nodes(), nodes);
}

// --- Dense ---

TEST_F(LayersTest, DenseOnImagesIsRefusedAskingForAFlatten) {
  const int64_t nodes = g_.num_nodes();
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({8, 8, 1}), layers::Dense(3, {.name = "head"})},
      {.graph = &g_});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(m.status(), "Dense 'head'")) << m.status();
  EXPECT_TRUE(Mentions(m.status(), "(None, 8, 8, 1)")) << m.status();
  EXPECT_TRUE(Mentions(m.status(), "Flatten")) << m.status();
  EXPECT_EQ(g_.num_nodes(), nodes);
}

// --- MaxPooling2D ---

TEST_F(LayersTest, MaxPooling2DTakesEachWindowsMaximumWithAMaxPoolOp) {
  Sequential m =
      Create({layers::Input({4, 4, 1}), layers::MaxPooling2D({2, 2})});
  EXPECT_EQ(OpOf(g_, "max_pooling2d/MaxPool"), "MaxPool");
  Tensor y = m.Predict(Floats({1, 4, 4, 1}, {1, 2, 3, 4,     //
                                             5, 6, 7, 8,     //
                                             9, 10, 11, 12,  //
                                             13, 14, 15, 16}))
                 .value();
  EXPECT_EQ(y.shape(), TensorShape({1, 2, 2, 1}));
  EXPECT_EQ(Values(y), (std::vector<float>{6, 8, 14, 16}));
}

TEST_F(LayersTest, MaxPooling2DStridesDefaultToThePoolSize) {
  Sequential m =
      Create({layers::Input({7, 7, 3}), layers::MaxPooling2D({3, 3})});
  EXPECT_EQ(m.Predict(RandomImages(1, {7, 7, 3}, 2)).value().shape(),
            TensorShape({1, 2, 2, 3}));
}

// --- Flatten, Reshape, Activation ---

TEST_F(LayersTest, FlattenKeepsTheBatchAndJoinsTheRestWithAReshapeOp) {
  Sequential m = Create({layers::Input({2, 3, 2}), layers::Flatten()});
  EXPECT_EQ(OpOf(g_, "flatten/Reshape"), "Reshape");
  Tensor x = RandomImages(4, {2, 3, 2}, 3);
  Tensor y = m.Predict(x).value();
  EXPECT_EQ(y.shape(), TensorShape({4, 12}));
  EXPECT_EQ(Values(y), Values(x));
}

TEST_F(LayersTest, ReshapeInfersItsUnknownDimension) {
  Sequential m = Create({layers::Input({6}), layers::Reshape({2, -1})});
  EXPECT_EQ(m.Predict(RandomImages(5, {6}, 4)).value().shape(),
            TensorShape({5, 2, 3}));
}

TEST_F(LayersTest, ReshapeToAnotherSizeIsRefusedNamingBothShapes) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({6}), layers::Reshape({4, -1})}, {.graph = &g_});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(m.status(), "Reshape")) << m.status();
  EXPECT_TRUE(Mentions(m.status(), "(None, 6)")) << m.status();
  EXPECT_TRUE(Mentions(m.status(), "(None, 4, -1)")) << m.status();
}

TEST_F(LayersTest, ActivationAppliesItsFunction) {
  Sequential m = Create({layers::Input({3}), layers::Activation("relu")});
  EXPECT_EQ(OpOf(g_, "activation/Relu"), "Relu");
  EXPECT_EQ(Values(m.Predict(Floats({1, 3}, {-1, 0, 2})).value()),
            (std::vector<float>{0, 0, 2}));
}

// --- Dropout ---

TEST_F(LayersTest, DropoutIsTheIdentityInPredict) {
  Sequential m = Create({layers::Input({50}), layers::Dropout(0.5f)});
  Tensor x = RandomImages(4, {50}, 5);
  EXPECT_EQ(Values(m.Predict(x).value()), Values(x));
}

// The training path's output of a model whose last layer is `dropout`.
Tensor TrainingOutput(Graph& g, const Tensor& x) {
  Session session(g);
  Output in(g.FindNode("input").value(), 0);
  Output out(g.FindNode("dropout/Mul_1").value(), 0);
  return session.Run({{in, x}}, {out}).value()[0];
}

TEST_F(LayersTest, DropoutInTrainingZeroesAboutRateAndScalesTheRest) {
  Create({layers::Input({1000}), layers::Dropout(0.25f, "", 11)});
  Tensor x = Floats({1, 1000}, std::vector<float>(1000, 3.f));
  std::vector<float> y = Values(TrainingOutput(g_, x));
  const int64_t zeros = std::count(y.begin(), y.end(), 0.f);
  EXPECT_NEAR(zeros, 250, 60);
  for (float v : y) {
    if (v != 0.f) {
      EXPECT_FLOAT_EQ(v, 4.f);  // 3 / (1 - 0.25)
    }
  }
}

TEST_F(LayersTest, DropoutWithASeedDrawsTheSameMasks) {
  Tensor x = Floats({1, 100}, std::vector<float>(100, 1.f));
  Graph a, b, c;
  for (auto [g, seed] :
       {std::pair{&a, 5}, std::pair{&b, 5}, std::pair{&c, 6}}) {
    ASSERT_TRUE(Sequential::Create(
                    {layers::Input({100}), layers::Dropout(0.5f, "", seed)},
                    {.graph = g})
                    .ok());
  }
  EXPECT_EQ(Values(TrainingOutput(a, x)), Values(TrainingOutput(b, x)));
  EXPECT_NE(Values(TrainingOutput(a, x)), Values(TrainingOutput(c, x)));
}

TEST_F(LayersTest, DropoutOfRateZeroAddsNoNode) {
  Sequential plain = Create({layers::Input({4}), layers::Dense(2)});
  const int64_t before = g_.num_nodes();
  Sequential m =
      Create({layers::Input({4}), layers::Dropout(0.f), layers::Dense(2)});
  // rate 0: no training path either; same node count as the plain model.
  EXPECT_EQ(g_.num_nodes() - before, before);
}

TEST_F(LayersTest, ModelsWithTheSameSeedsTrainIdenticallyThroughDropout) {
  auto train = [&](uint64_t dropout_seed) {
    Sequential m = Create({layers::Input({6}),
                           layers::Dense(8, {.activation = "relu", .seed = 1}),
                           layers::Dropout(0.5f, "", dropout_seed),
                           layers::Dense(2, {.seed = 2})});
    EXPECT_TRUE(
        m.Compile({.optimizer = optimizers::SGD({.learning_rate = 0.1f}),
                   .loss = losses::MeanSquaredError()})
            .ok());
    Tensor x = RandomImages(16, {6}, 8);
    Tensor y = RandomImages(16, {2}, 9);
    EXPECT_TRUE(
        m.Fit(x, y, {.epochs = 2, .batch_size = 4, .verbose = 0, .seed = 3})
            .ok());
    return Values(m.GetWeights()[0]);
  };
  EXPECT_EQ(train(21), train(21));
  EXPECT_NE(train(21), train(22));
}

// --- BatchNormalization ---

TEST_F(LayersTest, BatchNormalizationStartsWithKerasDefaults) {
  Sequential m = Create({layers::Input({3}), layers::BatchNormalization()});
  std::vector<Tensor> w = m.GetWeights();
  ASSERT_EQ(w.size(), 4u);  // gamma, beta, moving_mean, moving_variance
  EXPECT_EQ(Values(w[0]), std::vector<float>(3, 1.f));
  EXPECT_EQ(Values(w[1]), std::vector<float>(3, 0.f));
  EXPECT_EQ(Values(w[2]), std::vector<float>(3, 0.f));
  EXPECT_EQ(Values(w[3]), std::vector<float>(3, 1.f));
  EXPECT_EQ(OpOf(g_, "batch_normalization/FusedBatchNormV3"),
            "FusedBatchNormV3");
}

TEST_F(LayersTest, BatchNormalizationPredictUsesTheMovingStatistics) {
  Sequential m = Create(
      {layers::Input({2}), layers::BatchNormalization({.epsilon = 1.f})});
  ASSERT_TRUE(m.SetWeights({Floats({2}, {2, 1}), Floats({2}, {1, 0}),
                            Floats({2}, {3, -1}), Floats({2}, {3, 8})})
                  .ok());
  // (x - mean) / sqrt(var + eps) * gamma + beta.
  ExpectNear(m.Predict(Floats({1, 2}, {5, 2})).value(), {3, 1});
}

TEST_F(LayersTest, BatchNormalizationNormalisesImagesPerChannel) {
  Sequential m = Create(
      {layers::Input({1, 2, 2}), layers::BatchNormalization({.epsilon = 1.f})});
  ASSERT_TRUE(m.SetWeights({Floats({2}, {1, 1}), Floats({2}, {0, 0}),
                            Floats({2}, {1, 10}), Floats({2}, {3, 15})})
                  .ok());
  ExpectNear(m.Predict(Floats({1, 1, 2, 2}, {3, 14, 5, 18})).value(),
             {1, 1, 2, 2});
}

TEST_F(LayersTest,
       BatchNormalizationTrainingUpdatesTheMovingStatisticsByMomentum) {
  Sequential m = Create({layers::Input({2}),
                         layers::BatchNormalization({.momentum = 0.9f}),
                         layers::Dense(1, {.seed = 1})});
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD({.learning_rate = 0.f}),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  // Feature 0: 1, 2, 3, 6 (mean 3, unbiased variance 14/3); feature 1: 0s.
  Tensor x = Floats({4, 2}, {1, 0, 2, 0, 3, 0, 6, 0});
  Tensor y = Floats({4, 1}, {0, 0, 0, 0});
  ASSERT_TRUE(m.Fit(x, y, {.batch_size = 4, .verbose = 0}).ok());
  std::vector<Tensor> w = m.GetWeights();
  EXPECT_NEAR(Values(w[2])[0], 0.9f * 0 + 0.1f * 3, 1e-6);
  EXPECT_NEAR(Values(w[2])[1], 0.f, 1e-6);
  EXPECT_NEAR(Values(w[3])[0], 0.9f * 1 + 0.1f * 14.f / 3, 1e-5);
  EXPECT_NEAR(Values(w[3])[1], 0.9f, 1e-6);
  // gamma and beta trained (at learning rate 0: unchanged), the moving
  // statistics are not trained by the optimizer.
  EXPECT_EQ(Values(w[0]), (std::vector<float>{1, 1}));
}

TEST_F(LayersTest,
       BatchNormalizationTrainsGammaAndBetaButNotTheMovingStatistics) {
  Sequential m = Create({layers::Input({2}), layers::BatchNormalization(),
                         layers::Dense(1, {.seed = 1})});
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD({.learning_rate = 0.1f}),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  Tensor x = RandomImages(8, {2}, 4);
  Tensor y = RandomImages(8, {1}, 5);
  std::vector<Tensor> before = m.GetWeights();
  ASSERT_TRUE(m.Fit(x, y, {.batch_size = 8, .verbose = 0}).ok());
  std::vector<Tensor> after = m.GetWeights();
  EXPECT_NE(Values(after[0]), Values(before[0]));  // gamma
  EXPECT_NE(Values(after[1]), Values(before[1]));  // beta
}

TEST_F(LayersTest, BatchNormalizationOfAnotherRankIsRefused) {
  absl::StatusOr<Sequential> m = Sequential::Create(
      {layers::Input({4, 5}), layers::BatchNormalization()}, {.graph = &g_});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(m.status(), "BatchNormalization")) << m.status();
  EXPECT_TRUE(Mentions(m.status(), "(None, 4, 5)")) << m.status();
}

// --- gradients, at layer level ---

// One full-batch SGD step moves every weight by -learning_rate times the
// loss's gradient; the gradient is measured here by central differences of
// Evaluate's loss (the same path: Conv2D, MaxPooling2D, Flatten and Dense
// behave alike in training and inference).
TEST_F(LayersTest, AFitStepFollowsTheNumericalGradientThroughConvAndPooling) {
  Sequential m =
      Create({layers::Input({5, 5, 2}),
              layers::Conv2D(2, {2, 2}, {.activation = "tanh", .seed = 1}),
              layers::MaxPooling2D({2, 2}), layers::Flatten(),
              layers::Dense(2, {.seed = 2})});
  const float lr = 1e-3f;
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  testing_internal::ExpectSgdStepFollowsNumericalGradient(
      m, RandomImages(6, {5, 5, 2}, 6), RandomImages(6, {2}, 7), lr);
}

// --- training and inference paths ---

TEST_F(LayersTest, ADenseStackHasOneForwardPathForTrainingAndInference) {
  Sequential m = Create({layers::Input({4}), layers::Dense(2)});
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  EXPECT_FALSE(g_.FindNode("sequential/inference/loss/value").has_value());
}

TEST_F(LayersTest, DropoutGivesTheModelASeparateInferenceLoss) {
  Sequential m =
      Create({layers::Input({4}), layers::Dropout(0.5f), layers::Dense(2)});
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  EXPECT_TRUE(g_.FindNode("sequential/inference/loss/value").has_value());
}

TEST_F(LayersTest, EvaluateUsesTheInferencePathWithoutDropout) {
  Sequential m = Create({layers::Input({20}), layers::Dropout(0.9f),
                         layers::Dense(1, {.seed = 1})});
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  Tensor x = RandomImages(8, {20}, 1);
  Tensor y = RandomImages(8, {1}, 2);
  std::vector<float> p = Values(m.Predict(x).value());
  std::vector<float> t = Values(y);
  double mse = 0;
  for (size_t i = 0; i < p.size(); ++i) mse += (p[i] - t[i]) * (p[i] - t[i]);
  mse /= p.size();
  EXPECT_NEAR(m.Evaluate(x, y).value().at("loss"), mse, 1e-5);
  EXPECT_EQ(m.Evaluate(x, y).value().at("loss"),
            m.Evaluate(x, y).value().at("loss"));
}

TEST_F(LayersTest, CompileOfAModelWithImageOutputsIsRefused) {
  Sequential m = Create({layers::Input({4, 4, 1}), layers::Conv2D(2, {3, 3})});
  absl::Status s = m.Compile(
      {.optimizer = optimizers::SGD(), .loss = losses::MeanSquaredError()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "(None, 2, 2, 2)")) << s;
  EXPECT_FALSE(m.compiled());
}

// --- the step graph ---

TEST_F(LayersTest, ACompiledCnnExportsTensorFlowOpTypes) {
  Sequential m = Create(
      {layers::Input({6, 6, 1}), layers::Conv2D(2, {3, 3}),
       layers::BatchNormalization(), layers::Conv2D(2, {2, 2}),
       layers::MaxPooling2D({2, 2}), layers::Flatten(), layers::Dropout(0.5f),
       layers::Dense(2, {.activation = "softmax"})});
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                         .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
  proto::GraphDef def = ExportGraphDef(m.GraphRoots()).value();
  std::set<std::string> ops;
  for (const proto::NodeDef& node : def.node()) ops.insert(node.op());
  for (const char* op :
       {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool",
        "MaxPoolGrad", "Reshape", "FusedBatchNormV3", "FusedBatchNormGradV3",
        "RandomUniform", "AssignVariableOp"}) {
    EXPECT_TRUE(ops.contains(op)) << op;
  }
}

TEST_F(LayersTest, BatchNormalizationUpdatesRunInTheStepAndNotInPredict) {
  Sequential m = Create({layers::Input({2}), layers::BatchNormalization(),
                         layers::Dense(1, {.seed = 1})});
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  Tensor x = RandomImages(8, {2}, 4);
  ASSERT_TRUE(m.Predict(x).ok());
  ASSERT_TRUE(m.Evaluate(x, RandomImages(8, {1}, 5)).ok());
  EXPECT_EQ(Values(m.GetWeights()[2]), std::vector<float>(2, 0.f));
  ASSERT_TRUE(m.Fit(x, RandomImages(8, {1}, 5), {.verbose = 0}).ok());
  EXPECT_NE(Values(m.GetWeights()[2]), std::vector<float>(2, 0.f));
}

// The same through BatchNormalization's training path (batch statistics):
// the loss is read from the step's own loss node, for the same batch.
TEST_F(LayersTest,
       AFitStepFollowsTheNumericalGradientThroughBatchNormalization) {
  Sequential m =
      Create({layers::Input({3, 3, 2}), layers::Conv2D(2, {2, 2}, {.seed = 1}),
              layers::BatchNormalization(), layers::Flatten(),
              layers::Dense(2, {.seed = 2})});
  const float lr = 1e-3f;
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD({.learning_rate = lr}),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  Tensor x = RandomImages(6, {3, 3, 2}, 6);
  Tensor y = RandomImages(6, {2}, 7);
  Session session(g_);
  Output input(g_.FindNode("input").value(), 0);
  Output labels(g_.FindNode("sequential/labels").value(), 0);
  Output loss(g_.FindNode("sequential/loss/value").value(), 0);
  // Every loss is sample-weighted: ones weigh as none.
  Output weight(g_.FindNode("sequential/sample_weight").value(), 0);
  const Tensor ones = Floats({6}, std::vector<float>(6, 1.f));
  const std::vector<Tensor> w0 = m.GetWeights();
  auto loss_at = [&](const std::vector<Tensor>& w) {
    EXPECT_TRUE(m.SetWeights(w).ok());
    return static_cast<double>(
        session.Run({{input, x}, {labels, y}, {weight, ones}}, {loss})
            .value()[0]
            .data<float>()[0]);
  };
  const float h = 2e-3f;
  std::vector<std::vector<double>> numeric(w0.size());
  for (size_t t = 0; t < w0.size(); ++t) {
    for (int64_t i = 0; i < w0[t].num_elements(); ++i) {
      std::vector<Tensor> plus = w0, minus = w0;
      std::vector<float> p = Values(w0[t]), q = Values(w0[t]);
      p[i] += h;
      q[i] -= h;
      plus[t] = Floats(w0[t].shape(), p);
      minus[t] = Floats(w0[t].shape(), q);
      numeric[t].push_back((loss_at(plus) - loss_at(minus)) / (2 * h));
    }
  }
  ASSERT_TRUE(m.SetWeights(w0).ok());
  ASSERT_TRUE(
      m.Fit(x, y, {.batch_size = 6, .shuffle = false, .verbose = 0}).ok());
  const std::vector<Tensor> w1 = m.GetWeights();
  for (size_t t = 0; t < w0.size(); ++t) {
    if (t == 4 || t == 5) continue;  // the moving statistics: not trained
    for (int64_t i = 0; i < w0[t].num_elements(); ++i) {
      const double step = Values(w0[t])[i] - Values(w1[t])[i];
      EXPECT_NEAR(step / lr, numeric[t][i],
                  2e-2 + 2e-2 * std::abs(numeric[t][i]))
          << "weight " << t << " element " << i;
    }
  }
}

// --- a small CNN learns ---

// 8x8 images of noise with a bright 3x3 blob in one quadrant; the label is
// the quadrant (0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right).
std::pair<Tensor, Tensor> BlobImages(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> noise(0.f, 0.3f);
  std::uniform_int_distribution<int> quadrant(0, 3), offset(0, 1);
  std::vector<float> xs(n * 64);
  std::vector<int32_t> ys(n);
  for (int64_t s = 0; s < n; ++s) {
    float* img = xs.data() + s * 64;
    for (int i = 0; i < 64; ++i) img[i] = noise(rng);
    const int q = quadrant(rng);
    const int top = (q / 2) * 4 + offset(rng), left = (q % 2) * 4 + offset(rng);
    for (int r = top; r < top + 3; ++r) {
      for (int c = left; c < left + 3; ++c) img[r * 8 + c] = 1.f;
    }
    ys[s] = q;
  }
  return {Floats({n, 8, 8, 1}, xs), Ints(ys)};
}

TEST_F(LayersTest, ASmallCnnLearnsWhichQuadrantHoldsTheBlob) {
  Sequential m =
      Create({layers::Input({8, 8, 1}),
              layers::Conv2D(4, {3, 3}, {.activation = "relu", .seed = 1}),
              layers::MaxPooling2D({2, 2}), layers::Flatten(),
              layers::Dropout(0.2f, "", 2),
              layers::Dense(4, {.activation = "softmax", .seed = 3})});
  ASSERT_TRUE(
      m.Compile({.optimizer = optimizers::Adam({.learning_rate = 0.02f}),
                 .loss = losses::SparseCategoricalCrossentropy(),
                 .metrics = {"accuracy"}})
          .ok());
  auto [x, y] = BlobImages(256, 1);
  ASSERT_TRUE(
      m.Fit(x, y, {.epochs = 8, .batch_size = 32, .verbose = 0, .seed = 4})
          .ok());
  auto [tx, ty] = BlobImages(200, 2);
  const float accuracy = m.Evaluate(tx, ty).value().at("accuracy");
  std::printf("held-out accuracy of the CNN: %.3f\n", accuracy);
  EXPECT_GE(accuracy, 0.95f);
}

}  // namespace
}  // namespace graphgc
