#include "tools/seed_workload.h"

#include <cstdint>
#include <random>
#include <vector>

#include "models/losses.h"
#include "models/optimizers.h"
#include "util/status_macros.h"

namespace graphgc::seed {

std::pair<Tensor, Tensor> Data(int samples) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(0, 1);
  std::uniform_int_distribution<int32_t> label(0, 9);
  std::vector<float> xs(static_cast<size_t>(samples) * 10);
  std::vector<int32_t> ys(samples);
  for (float& v : xs) v = u(rng);
  for (int32_t& v : ys) v = label(rng);
  return {Tensor::FromData<float>({samples, 10}, xs).value(),
          Tensor::FromData<int32_t>({samples}, ys).value()};
}

absl::StatusOr<Sequential> Model(Graph& graph, int intra_op_threads,
                                 const std::optional<Layer>& shared) {
  Layer hidden =
      shared.has_value() ? *shared : layers::Dense(64, {.activation = "relu"});
  GG_ASSIGN_OR_RETURN(
      Sequential model,
      Sequential::Create(
          {layers::Input({10}), hidden,
           layers::Dense(10, {.activation = "softmax"})},
          {.graph = &graph, .intra_op_threads = intra_op_threads}));
  GG_RETURN_IF_ERROR(
      model.Compile({.optimizer = optimizers::Adam(),
                     .loss = losses::SparseCategoricalCrossentropy()}));
  return model;
}

}  // namespace graphgc::seed
