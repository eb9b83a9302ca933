// models/random_seed.h: set_random_seed's stream of drawn seeds, and the
// models it makes reproducible (initialisers, Dropout, Fit's shuffling).
// The seed is process-wide: the first test reads the state before any
// test sets it, so this file's tests run in declaration order.
#include "models/random_seed.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace {

TEST(RandomSeed, UnsetLeavesFitShufflingAtItsFixedOrder) {
  ASSERT_EQ(GetRandomSeed(), std::nullopt);
  EXPECT_EQ(FitShuffleSeed(0), 0u);
  EXPECT_NE(DrawSeed(), 0u);
}

TEST(RandomSeed, GetReturnsTheSeedSetLast) {
  SetRandomSeed(5);
  SetRandomSeed(1337);
  EXPECT_EQ(GetRandomSeed(), 1337u);
}

TEST(RandomSeed, SettingTheSameSeedRepeatsTheDraws) {
  SetRandomSeed(1337);
  const std::vector<uint64_t> first = {DrawSeed(), DrawSeed(), DrawSeed()};
  SetRandomSeed(1337);
  const std::vector<uint64_t> again = {DrawSeed(), DrawSeed(), DrawSeed()};
  EXPECT_EQ(first, again);
  EXPECT_EQ(std::count(first.begin(), first.end(), 0u), 0);
  SetRandomSeed(1338);
  EXPECT_NE(DrawSeed(), first[0]);
}

TEST(RandomSeed, FitKeepsAGivenShuffleSeedAndDrawsForZero) {
  SetRandomSeed(3);
  EXPECT_EQ(FitShuffleSeed(42), 42u);
  const uint64_t drawn = FitShuffleSeed(0);
  SetRandomSeed(3);
  EXPECT_EQ(DrawSeed(), drawn);
  EXPECT_NE(drawn, 0u);
}

struct Trained {
  std::vector<Tensor> initial, final;
  std::map<std::string, std::vector<float>> history;
};

// Input(4) -> Dense(8) -> Dropout(0.5) -> Dense(3), no seeds given, fit
// with shuffling for 3 epochs.
Trained BuildAndFit(Graph& g) {
  Sequential m =
      Sequential::Create(
          {layers::Input({4}), layers::Dense(8, {.activation = "relu"}),
           layers::Dropout(0.5f, ""),
           layers::Dense(3, {.activation = "softmax"})},
          {.graph = &g})
          .value();
  EXPECT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                         .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
  std::vector<float> xs(64 * 4);
  std::vector<int32_t> ys(64);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 7);
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<int32_t>(i % 3);
  const Tensor x = Tensor::FromData<float>({64, 4}, xs).value();
  const Tensor y = Tensor::FromData<int32_t>({64}, ys).value();
  Trained t;
  t.initial = m.GetWeights();
  History h = m.Fit(x, y, {.epochs = 3, .batch_size = 8, .verbose = 0}).value();
  t.final = m.GetWeights();
  t.history = h.history;
  return t;
}

bool Same(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto x = a[i].data<float>(), y = b[i].data<float>();
    if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) return false;
  }
  return true;
}

TEST(RandomSeed, TwoModelsAfterTheSameSeedTrainIdentically) {
  Graph g;
  SetRandomSeed(1337);
  const Trained a = BuildAndFit(g);
  SetRandomSeed(1337);
  const Trained b = BuildAndFit(g);
  EXPECT_TRUE(Same(a.initial, b.initial));
  EXPECT_TRUE(Same(a.final, b.final));
  EXPECT_EQ(a.history, b.history);
}

TEST(RandomSeed, AnotherSeedGivesOtherWeights) {
  Graph g;
  SetRandomSeed(1337);
  const Trained a = BuildAndFit(g);
  SetRandomSeed(1338);
  const Trained b = BuildAndFit(g);
  EXPECT_FALSE(Same(a.initial, b.initial));
  EXPECT_NE(a.history, b.history);
}

}  // namespace
}  // namespace graphgc
