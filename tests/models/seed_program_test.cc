// The API.md seed program, unchanged but for the TensorBoard callback
// (tested with the export library), run as a test: ten unrelated models on
// the default graph, one epoch each, with nothing left behind.
#include <cmath>
#include <cstdlib>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "runtime/tensor.h"

namespace gg = graphgc;

namespace {

gg::Sequential ModelFn() {
  gg::Sequential model =
      gg::Sequential::Create(
          {
              gg::layers::Input({10}),
              gg::layers::Dense(64, {.activation = "relu"}),
              gg::layers::Dense(10, {.activation = "softmax"}),
          })
          .value();
  absl::Status s =
      model.Compile({.optimizer = gg::optimizers::Adam(),
                     .loss = gg::losses::SparseCategoricalCrossentropy()});
  if (!s.ok()) std::abort();
  return model;
}

TEST(SeedProgram, TenModelsTrainAndLeaveNothingBehind) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(0, 1);
  std::uniform_int_distribution<int32_t> label(0, 9);
  std::vector<float> xs(1000 * 10);
  std::vector<int32_t> ys(1000);
  for (float& v : xs) v = u(rng);
  for (int32_t& v : ys) v = label(rng);
  gg::Tensor x = gg::Tensor::FromData<float>({1000, 10}, xs).value();
  gg::Tensor y = gg::Tensor::FromData<int32_t>({1000}, ys).value();
  gg::Graph& g = gg::Graph::Default();
  g.Collect();
  const int64_t before = g.num_nodes();
  for (int i = 0; i < 10; ++i) {
    gg::Sequential model = ModelFn();
    gg::History history = model.Fit(x, y, {.verbose = 0}).value();
    ASSERT_EQ(history.values("loss").size(), 1u);
    // Random labels: the loss of one epoch stays near ln 10 ~ 2.30.
    EXPECT_NEAR(history.values("loss")[0], std::log(10.0), 0.1) << i;
  }
  g.Collect();
  EXPECT_EQ(g.num_nodes(), before);
}

}  // namespace
