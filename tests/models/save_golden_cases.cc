#include "tests/models/save_golden_cases.h"

#include <cstdint>
#include <filesystem>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "util/status_macros.h"

namespace graphgc {
namespace testing {
namespace {

// `n` floats in [-1, 1) from a fixed generator, as a tensor of `shape`.
absl::StatusOr<Tensor> Floats(std::vector<int64_t> shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xs(n);
  for (float& v : xs) v = u(rng);
  return Tensor::FromData<float>(TensorShape(shape), xs);
}

absl::StatusOr<Tensor> SparseLabels(int64_t n, int classes) {
  std::vector<int32_t> ys(n);
  for (int64_t i = 0; i < n; ++i) ys[i] = static_cast<int32_t>(i % classes);
  return Tensor::FromData<int32_t>({n}, ys);
}

absl::StatusOr<Tensor> OneHotLabels(int64_t n, int classes) {
  std::vector<float> ys(n * classes, 0.f);
  for (int64_t i = 0; i < n; ++i) ys[i * classes + i % classes] = 1.f;
  return Tensor::FromData<float>({n, classes}, ys);
}

// Input(4) -> Dense(8, relu) -> Dropout(0.25) -> Dense(3, softmax); Adam,
// sparse categorical crossentropy, accuracy; two epochs of Fit.
absl::StatusOr<Sequential> MlpAdamSparseFit(Graph& g) {
  GG_ASSIGN_OR_RETURN(
      Sequential m,
      Sequential::Create(
          {layers::Input({4}),
           layers::Dense(8, {.activation = "relu", .seed = 101}),
           layers::Dropout(0.25f, "", 102),
           layers::Dense(3, {.activation = "softmax", .seed = 103})},
          {.graph = &g}));
  GG_RETURN_IF_ERROR(
      m.Compile({.optimizer = optimizers::Adam({.learning_rate = 0.01f}),
                 .loss = losses::SparseCategoricalCrossentropy(),
                 .metrics = {"accuracy"}}));
  GG_ASSIGN_OR_RETURN(Tensor x, Floats({32, 4}, 7));
  GG_ASSIGN_OR_RETURN(Tensor y, SparseLabels(32, 3));
  GG_RETURN_IF_ERROR(
      m.Fit(x, y, {.epochs = 2, .batch_size = 8, .verbose = 0, .seed = 5})
          .status());
  return m;
}

// Input(6, 6, 1) -> Conv2D(4, 3x3, relu) -> BatchNormalization ->
// MaxPooling2D(2) -> Flatten -> Dense(3, softmax); SGD with momentum,
// categorical crossentropy; one epoch of Fit.
absl::StatusOr<Sequential> CnnSgdCategoricalFit(Graph& g) {
  GG_ASSIGN_OR_RETURN(
      Sequential m,
      Sequential::Create(
          {layers::Input({6, 6, 1}),
           layers::Conv2D(4, {3, 3}, {.activation = "relu", .seed = 201}),
           layers::BatchNormalization({.momentum = 0.9f}),
           layers::MaxPooling2D({2, 2}), layers::Flatten(),
           layers::Dense(3, {.activation = "softmax", .seed = 202})},
          {.graph = &g}));
  GG_RETURN_IF_ERROR(m.Compile(
      {.optimizer = optimizers::SGD({.learning_rate = 0.05f, .momentum = 0.9f}),
       .loss = losses::CategoricalCrossentropy(),
       .metrics = {"accuracy"}}));
  GG_ASSIGN_OR_RETURN(Tensor x, Floats({16, 6, 6, 1}, 11));
  GG_ASSIGN_OR_RETURN(Tensor y, OneHotLabels(16, 3));
  GG_RETURN_IF_ERROR(
      m.Fit(x, y, {.epochs = 1, .batch_size = 4, .verbose = 0, .seed = 9})
          .status());
  return m;
}

// Input(8) -> Reshape(2, 4) -> Flatten -> Dense(2) -> Activation(tanh);
// SGD with Nesterov momentum, mean squared error, from logits nowhere;
// compiled, never trained.
absl::StatusOr<Sequential> ReshapeSgdMseCompiled(Graph& g) {
  GG_ASSIGN_OR_RETURN(
      Sequential m,
      Sequential::Create(
          {layers::Input({8}, "features"), layers::Reshape(TensorShape({2, 4})),
           layers::Flatten("flat"), layers::Dense(2, {.seed = 301}),
           layers::Activation("tanh")},
          {.name = "regressor", .graph = &g}));
  GG_RETURN_IF_ERROR(m.Compile(
      {.optimizer = optimizers::SGD(
           {.learning_rate = 0.1f, .momentum = 0.5f, .nesterov = true}),
       .loss = losses::MeanSquaredError()}));
  return m;
}

// Input(5, 5, 2) -> Conv2D(3, 2x2, stride 2, same, no bias) ->
// MaxPooling2D(2, stride 1, same) -> Reshape(-1) -> Dense(2, no bias) ->
// BatchNormalization -> Dropout(0.5); never compiled.
absl::StatusOr<Sequential> ConvUncompiled(Graph& g) {
  return Sequential::Create(
      {layers::Input({5, 5, 2}),
       layers::Conv2D(
           3, {2},
           {.strides = {2}, .padding = "same", .use_bias = false, .seed = 401}),
       layers::MaxPooling2D({2}, {.strides = {1}, .padding = "same"}),
       layers::Reshape(TensorShape({-1})),
       layers::Dense(2, {.activation = "sigmoid",
                         .use_bias = false,
                         .name = "head",
                         .seed = 402}),
       layers::BatchNormalization({.momentum = 0.5f, .epsilon = 1e-2f}),
       layers::Dropout(0.5f, "drop", 403)},
      {.name = "uncompiled", .graph = &g});
}

// Adam with from_logits sparse crossentropy, compiled, never trained.
absl::StatusOr<Sequential> LogitsAdamCompiled(Graph& g) {
  GG_ASSIGN_OR_RETURN(
      Sequential m,
      Sequential::Create({layers::Input({3}), layers::Dense(4, {.seed = 501})},
                         {.graph = &g}));
  GG_RETURN_IF_ERROR(m.Compile(
      {.optimizer = optimizers::Adam(
           {.learning_rate = 0.002f, .beta_1 = 0.8f, .epsilon = 1e-6f}),
       .loss = losses::SparseCategoricalCrossentropy({.from_logits = true})}));
  return m;
}

using Builder = absl::StatusOr<Sequential> (*)(Graph&);

const std::vector<std::pair<std::string, Builder>>& Cases() {
  static const auto* cases = new std::vector<std::pair<std::string, Builder>>{
      {"mlp_adam_sparse_fit", MlpAdamSparseFit},
      {"cnn_sgd_categorical_fit", CnnSgdCategoricalFit},
      {"reshape_sgd_mse_compiled", ReshapeSgdMseCompiled},
      {"conv_uncompiled", ConvUncompiled},
      {"logits_adam_compiled", LogitsAdamCompiled},
  };
  return *cases;
}

}  // namespace

std::vector<std::string> GoldenCaseNames() {
  std::vector<std::string> names;
  for (const auto& [name, build] : Cases()) names.push_back(name);
  return names;
}

absl::Status WriteGoldenCase(const std::string& name, const std::string& root) {
  for (const auto& [case_name, build] : Cases()) {
    if (case_name != name) continue;
    const std::string dir = absl::StrCat(root, "/", name);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    Graph g;
    GG_ASSIGN_OR_RETURN(Sequential model, build(g));
    GG_RETURN_IF_ERROR(model.Save(dir));
    return SaveWeights(model, absl::StrCat(dir, "/save_weights.weights.h5"));
  }
  return absl::NotFoundError(absl::StrCat("no golden case '", name, "'"));
}

}  // namespace testing
}  // namespace graphgc
