// The seed program of ../shared/API.md, verbatim: ten unrelated models, one
// after the other, on the default graph, each logging to logs/<i>.
//
//   ./bazelw build //examples:seed_program
//   (mkdir -p /tmp/seed && cd /tmp/seed &&
//    "$OLDPWD/bazel-bin/examples/seed_program")
//   ./bazelw run //tools:tfevents -- /tmp/seed/logs/*/train/*
//
// Kept byte for byte as API.md has it, hence no clang-format.
// clang-format off

#include <cstdlib>
#include <random>
#include "absl/strings/str_cat.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "runtime/tensor.h"

namespace gg = graphgc;

gg::Sequential ModelFn() {
  gg::Sequential model = gg::Sequential::Create({
      gg::layers::Input({10}),
      gg::layers::Dense(64, {.activation = "relu"}),
      gg::layers::Dense(10, {.activation = "softmax"}),
  }).value();
  absl::Status s = model.Compile({.optimizer = gg::optimizers::Adam(),
                                  .loss = gg::losses::SparseCategoricalCrossentropy()});
  if (!s.ok()) std::abort();
  return model;
}

int main() {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(0, 1);
  std::uniform_int_distribution<int32_t> label(0, 9);
  std::vector<float> xs(1000 * 10);
  std::vector<int32_t> ys(1000);
  for (float& v : xs) v = u(rng);
  for (int32_t& v : ys) v = label(rng);
  gg::Tensor x = gg::Tensor::FromData<float>({1000, 10}, xs).value();
  gg::Tensor y = gg::Tensor::FromData<int32_t>({1000}, ys).value();
  for (int i = 0; i < 10; ++i) {
    gg::Sequential model = ModelFn();
    auto tensorboard = gg::callbacks::TensorBoard::Create(
        {.log_dir = absl::StrCat("logs/", i), .update_freq = 600});
    gg::History history = model.Fit(x, y, {.callbacks = {tensorboard}}).value();
  }
}
