#include "models/load_budget.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <utility>
#include <variant>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layer_state.h"
#include "models/optimizer_registry.h"
#include "models/saving_access.h"

namespace graphgc {
namespace models_internal {
namespace {

std::string Decimal(absl::int128 v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

int OptimizerSlots(const std::optional<CompileOptions>& compile) {
  if (!compile.has_value()) return 0;
  const OptimizerKind* kind = FindOptimizerKind(compile->optimizer);
  return kind != nullptr ? kind->slots_per_weight(compile->optimizer) : 0;
}

absl::StatusOr<LoadBudget> CheckLoadBudget(const std::vector<Layer>& layers,
                                           int optimizer_slots,
                                           const std::string& file,
                                           int64_t max_bytes) {
  // Each layer's input along the stack, while the layers are valid.
  std::vector<TensorShape> inputs;
  TensorShape in;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerState* state = SavingAccess::State(layers[i]);
    if (state == nullptr || !state->error.ok() ||
        (i == 0) != IsInputLayer(*state)) {
      break;
    }
    absl::StatusOr<TensorShape> out = models_internal::OutputShape(*state, in);
    if (!out.ok()) break;
    inputs.push_back(in);
    in = *std::move(out);
  }
  return CheckLoadBudget(
      std::vector<Layer>(layers.begin(), layers.begin() + inputs.size()),
      inputs, layers.size(), optimizer_slots, file, max_bytes);
}

absl::StatusOr<LoadBudget> CheckLoadBudget(
    const std::vector<Layer>& layers, const std::vector<TensorShape>& inputs,
    size_t num_layers, int optimizer_slots, const std::string& file,
    int64_t max_bytes) {
  absl::int128 elements = 0;
  for (size_t i = 0; i < layers.size() && i < inputs.size(); ++i) {
    const LayerState* state = SavingAccess::State(layers[i]);
    if (state == nullptr || !state->error.ok()) break;
    const TensorShape& in = inputs[i];
    bool known = true;
    for (const std::vector<int64_t>& shape : VariableShapes(*state, in)) {
      int64_t n = 1;
      for (int64_t d : shape) {
        if (d < 0) {
          known = false;
          break;
        }
        if (__builtin_mul_overflow(n, d, &n)) {
          return absl::ResourceExhaustedError(absl::StrCat(
              file, ": layers[", i, "] (", layers[i].kind(),
              ") declares more weights than can be counted, more than the "
              "load budget of ",
              max_bytes, " bytes (LoadOptions::max_bytes)"));
        }
      }
      if (!known) break;
      elements += n;
    }
    if (!known) break;
  }
  const absl::int128 weights = elements * int{sizeof(float)};
  // The model's variables and the values read, model.weights.h5's bytes
  // and HDF5's copy of them: the file holds the weights at least once.
  const absl::int128 load = 4 * weights;
  const absl::int128 limit =
      max_bytes > 0 ? absl::int128(max_bytes)
                    : absl::int128(std::numeric_limits<int64_t>::max());
  if (load > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        file, ": its layers declare ", Decimal(weights),
        " bytes of float32 weights; loading them takes at least ",
        Decimal(load),
        " bytes (the weights twice, model.weights.h5 twice), more than the "
        "load budget of ",
        max_bytes > 0 ? absl::StrCat(max_bytes, " bytes")
                      : std::string("2^63 bytes"),
        " (LoadOptions::max_bytes)"));
  }
  absl::int128 file_bytes = weights * (1 + optimizer_slots) +
                            kWeightsFileMargin +
                            absl::int128(kWeightsFileMarginPerLayer) *
                                static_cast<int64_t>(num_layers);
  // What the budget leaves once the weights are held twice, for the file's
  // two copies.
  file_bytes = std::min(file_bytes, (limit - 2 * weights) / 2);
  return LoadBudget{.weights_bytes = static_cast<int64_t>(weights),
                    .load_bytes = static_cast<int64_t>(load),
                    .max_file_bytes = static_cast<int64_t>(file_bytes)};
}

}  // namespace models_internal
}  // namespace graphgc
