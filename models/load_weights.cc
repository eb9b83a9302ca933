// LoadWeights: the model's Keras weights groups named as SaveWeights names
// them, the file read within the budget, decoded whole, then assigned.
#include "models/load_weights.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "models/functional_config.h"
#include "models/layer_state.h"
#include "models/load_budget.h"
#include "models/model_weights.h"
#include "models/out_of_memory.h"
#include "models/saving_access.h"
#include "util/file.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {

using models_internal::DecodeModelWeights;
using models_internal::KerasLayerOrder;
using models_internal::kWeightsFileMargin;
using models_internal::kWeightsFileMarginPerLayer;
using models_internal::LayerState;
using models_internal::ModelSnapshot;
using models_internal::OutOfMemoryIsAStatus;
using models_internal::SavingAccess;
using models_internal::WeightsPaths;

namespace {

// Optimizer slots per weight a Keras weights file may carry beside the
// weights: AMSGrad's m, v and vhat.
constexpr int kMaxOptimizerSlots = 3;

// The bytes of `layers`' float32 variables.
absl::int128 WeightsBytesOf(const std::vector<Layer>& layers) {
  absl::int128 count = 0;
  for (const Layer& layer : layers) {
    const LayerState* state = SavingAccess::State(layer);
    if (state == nullptr) continue;
    const models_internal::ParamCount params = CountParams(*state);
    count += absl::int128(params.trainable) + params.non_trainable;
  }
  return count * int{sizeof(float)};
}

// The largest file LoadWeights reads for `layers`, or ResourceExhausted
// when loading them needs more than `max_bytes`.
absl::StatusOr<int64_t> MaxFileBytes(const std::vector<Layer>& layers,
                                     const std::string& path,
                                     int64_t max_bytes) {
  const absl::int128 weights = WeightsBytesOf(layers);
  const absl::int128 limit =
      max_bytes > 0 ? absl::int128(max_bytes)
                    : absl::int128(std::numeric_limits<int64_t>::max());
  if (4 * weights > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "LoadWeights of ", path, ": the model's ",
        static_cast<int64_t>(weights),
        " bytes of weights take at least 4 times that to load (the values "
        "read, the variables, the file and HDF5's copy), more than the load "
        "budget of ",
        max_bytes, " bytes"));
  }
  absl::int128 file = weights * (1 + kMaxOptimizerSlots) + kWeightsFileMargin +
                      absl::int128(kWeightsFileMarginPerLayer) *
                          static_cast<int64_t>(layers.size());
  file = std::min(file, (limit - 2 * weights) / 2);
  return static_cast<int64_t>(file);
}

// `status` with the model's layer named when its message names that
// layer's weights group ("layers/dense_1/..."): Keras's groups are named by
// class and position, the user knows the layer by its own name.
absl::Status NameTheLayer(const absl::Status& status,
                          const std::vector<Layer>& layers,
                          const std::vector<std::string>& paths) {
  for (size_t i = 0; i < layers.size(); ++i) {
    if (paths[i].empty()) continue;
    if (absl::StrContains(status.message(), absl::StrCat(paths[i], "/")) ||
        absl::EndsWith(status.message(), paths[i])) {
      return Annotate(status, absl::StrCat("layer '", layers[i].name(), "' (",
                                           layers[i].kind(), ", weights group ",
                                           paths[i], ")"));
    }
  }
  return status;
}

// Reads `path`, at most `max_file` bytes of it, and assigns its weights to
// `handle`'s `layers`, whose Keras groups are `paths`.
absl::Status LoadInto(Sequential handle, const std::vector<Layer>& layers,
                      const std::vector<std::string>& paths,
                      const std::string& path, int64_t max_file,
                      int64_t max_bytes) {
  absl::StatusOr<std::string> h5 = ReadRegularFile(path, max_file);
  if (absl::IsResourceExhausted(h5.status())) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "LoadWeights: ", h5.status().message(),
        ": the model's weights, with "
        "optimizer state and HDF5 metadata, take at most ",
        max_file, " bytes within the load budget of ", max_bytes, " bytes"));
  }
  GG_RETURN_IF_ERROR(h5.status());
  absl::StatusOr<std::vector<Tensor>> values =
      DecodeModelWeights(*h5, layers, paths, path);
  if (!values.ok()) return NameTheLayer(values.status(), layers, paths);
  return SavingAccess::AssignWeights(handle, *std::move(values), path);
}

}  // namespace

absl::StatusOr<int64_t> MaxWeightsFileBytes(const Sequential& model,
                                            int64_t max_bytes) {
  return MaxFileBytes(model.layers(),
                      absl::StrCat("model '", model.name(), "'"), max_bytes);
}

absl::StatusOr<int64_t> MaxWeightsFileBytes(const Functional& model,
                                            int64_t max_bytes) {
  return MaxFileBytes(model.layers(),
                      absl::StrCat("model '", model.name(), "'"), max_bytes);
}

absl::Status LoadWeights(Sequential& model, const std::string& path,
                         int64_t max_bytes) {
  return OutOfMemoryIsAStatus(
      absl::StrCat("LoadWeights of ", path), [&]() -> absl::Status {
        GG_RETURN_IF_ERROR(CheckPath(path, "LoadWeights path"));
        const std::vector<Layer> layers = model.layers();
        GG_ASSIGN_OR_RETURN(const int64_t max_file,
                            MaxFileBytes(layers, path, max_bytes));
        return LoadInto(model, layers,
                        WeightsPaths(layers, /*functional=*/false), path,
                        max_file, max_bytes);
      });
}

absl::Status LoadWeights(Functional& model, const std::string& path,
                         int64_t max_bytes) {
  return OutOfMemoryIsAStatus(
      absl::StrCat("LoadWeights of ", path), [&]() -> absl::Status {
        GG_RETURN_IF_ERROR(CheckPath(path, "LoadWeights path"));
        // Bounded before the snapshot below copies the weights.
        GG_ASSIGN_OR_RETURN(const int64_t max_file,
                            MaxFileBytes(model.layers(), path, max_bytes));
        Sequential handle = SavingAccess::Handle(model);
        GG_ASSIGN_OR_RETURN(const ModelSnapshot snap,
                            SavingAccess::Snapshot(handle));
        // Groups are named in Keras's layer order, as SaveWeights names them;
        // the weights are assigned in the model's own layer order.
        std::vector<Layer> keras_order;
        const std::vector<size_t> order = KerasLayerOrder(snap);
        for (size_t i : order) keras_order.push_back(snap.layers[i].layer);
        const std::vector<std::string> keras_paths =
            WeightsPaths(keras_order, /*functional=*/true);
        std::vector<Layer> layers;
        for (const auto& saved : snap.layers) layers.push_back(saved.layer);
        std::vector<std::string> paths(layers.size());
        for (size_t k = 0; k < order.size(); ++k)
          paths[order[k]] = keras_paths[k];
        return LoadInto(handle, layers, paths, path, max_file, max_bytes);
      });
}

}  // namespace graphgc
