#include "models/model_weights.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/layer_configs.h"
#include "models/layer_state.h"
#include "serialize/keras_weights.h"
#include "serialize/keras_weights_layout.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

absl::StatusOr<std::string> WeightsBytes(const ModelSnapshot& snap,
                                         const std::string& where) {
  for (const models_internal::SavedLayer& saved : snap.layers) {
    if (FindKind(saved.layer.kind()) == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          where, ": layer '", saved.layer.name(), "' (", saved.layer.kind(),
          ") has no saving support (models/layer_configs.cc, kLayerKinds)"));
    }
  }
  std::vector<LayerWeights> weights;
  std::vector<Layer> layers;
  for (const auto& saved : snap.layers) layers.push_back(saved.layer);
  const std::vector<std::string> paths = WeightsPaths(layers);
  for (size_t i = 0; i < snap.layers.size(); ++i) {
    if (!paths[i].empty()) weights.push_back({paths[i], snap.layers[i].values});
  }
  absl::StatusOr<std::string> h5 = EncodeKerasWeights(weights);
  if (!h5.ok()) {
    return Annotate(h5.status(), where);
  }
  return h5;
}

absl::Status CheckSavedLayers(std::string_view h5,
                              const std::vector<Layer>& layers,
                              const std::string& file) {
  std::set<std::string> expected;
  for (const std::string& path : WeightsPaths(layers)) {
    if (!path.empty()) expected.insert(path.substr(sizeof("layers/") - 1));
  }
  absl::StatusOr<KerasWeightsLayers> saved = ListKerasWeightsLayers(
      absl::string_view(h5.data(), h5.size()), expected.size() + 1, file);
  GG_RETURN_IF_ERROR(saved.status());
  std::string unknown;
  for (const std::string& name : saved->names) {
    if (expected.count(name) == 0) {
      unknown = name;
      break;
    }
  }
  if (unknown.empty() && saved->count <= expected.size()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      file,
      ": Layer count mismatch when loading weights from file. Model "
      "expected ",
      expected.size(), " layers, found ", saved->count, " saved layers",
      unknown.empty() ? std::string()
                      : absl::StrCat(" ('layers/", unknown,
                                     "' is no layer of config.json)")));
}

absl::StatusOr<std::vector<Tensor>> DecodeModelWeights(
    const std::string& h5, const std::vector<Layer>& layers,
    const std::string& file) {
  const std::vector<std::string> paths = WeightsPaths(layers);
  std::vector<LayerWeightsSpec> specs;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].empty()) continue;
    LayerWeightsSpec spec{.path = paths[i]};
    const BuiltLayer* built = SavingAccess::State(layers[i])->built();
    if (built == nullptr) {
      return absl::InternalError(absl::StrCat(
          "LoadModel: layer ", i, " of the created model is not built"));
    }
    for (const auto& v : built->variables) spec.shapes.push_back(v.shape);
    specs.push_back(std::move(spec));
  }
  absl::StatusOr<std::vector<std::vector<Tensor>>> values =
      DecodeKerasWeights(h5, specs, file);
  GG_RETURN_IF_ERROR(values.status());
  std::vector<Tensor> flat;
  for (auto& layer : *values) {
    for (Tensor& t : layer) flat.push_back(std::move(t));
  }
  return flat;
}

}  // namespace models_internal
}  // namespace graphgc
