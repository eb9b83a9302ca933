#include "tools/seed_workload.h"

#include <cstdint>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "util/status_macros.h"

namespace graphgc::seed {

absl::StatusOr<std::pair<Tensor, Tensor>> Data(int samples) {
  if (samples < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("seed::Data: samples must be >= 0, got ", samples));
  }
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(0, 1);
  std::uniform_int_distribution<int32_t> label(0, 9);
  std::vector<float> xs(static_cast<size_t>(samples) * 10);
  std::vector<int32_t> ys(samples);
  for (float& v : xs) v = u(rng);
  for (int32_t& v : ys) v = label(rng);
  GG_ASSIGN_OR_RETURN(Tensor x, Tensor::FromData<float>({samples, 10}, xs));
  GG_ASSIGN_OR_RETURN(Tensor y, Tensor::FromData<int32_t>({samples}, ys));
  return std::pair<Tensor, Tensor>{std::move(x), std::move(y)};
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
