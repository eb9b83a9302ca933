// models/load_budget.h
//
// The memory a load takes, from config.json alone (see models/saving.h):
// the float32 weights the layers declare, what loading them takes, the
// largest model.weights.h5 to read, and the refusal of a load over the
// budget before anything is built or read. Private to models/.
#ifndef GRAPHGC_MODELS_LOAD_BUDGET_H_
#define GRAPHGC_MODELS_LOAD_BUDGET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/layers.h"
#include "models/sequential.h"

namespace graphgc {
namespace models_internal {

// HDF5 metadata in a weights file beyond the weights' own bytes: the
// superblock and heaps, plus object headers per layer (groups, datasets,
// Keras's attributes).
inline constexpr int64_t kWeightsFileMargin = int64_t{1} << 20;
inline constexpr int64_t kWeightsFileMarginPerLayer = int64_t{64} << 10;

// What loading a config's model takes (see models/saving.h).
struct LoadBudget {
  int64_t weights_bytes = 0;
  int64_t load_bytes = 0;
  int64_t max_file_bytes = 0;
};

// Optimizer slots per weight a Keras weights file may hold beside the
// weights for the config's optimizer: Adam's m and v, SGD's momentum.
int OptimizerSlots(const std::optional<CompileOptions>& compile);

// Counts the float32 weights `layers` declare, layer by layer while their
// shapes are valid (Sequential::Create refuses the first that is not,
// before building anything), and refuses a load over `max_bytes` (<= 0: no
// budget). Every product is overflow-checked; sums are 128-bit.
absl::StatusOr<LoadBudget> CheckLoadBudget(const std::vector<Layer>& layers,
                                           int optimizer_slots,
                                           const std::string& file,
                                           int64_t max_bytes);

// The same for layers whose inputs are known: `layers[i]`'s weights are
// made for per-sample input `inputs[i]` (a Functional's layers, each for
// its first call), counted while both last and the layers are valid;
// `num_layers` is the model's whole layer count (for the HDF5 metadata
// margin).
absl::StatusOr<LoadBudget> CheckLoadBudget(
    const std::vector<Layer>& layers, const std::vector<TensorShape>& inputs,
    size_t num_layers, int optimizer_slots, const std::string& file,
    int64_t max_bytes);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LOAD_BUDGET_H_
