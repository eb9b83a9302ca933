#include "models/model_weights.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/functional_config.h"
#include "models/layer_registry.h"
#include "models/layer_state.h"
#include "models/optimizer_state.h"
#include "serialize/keras_weights.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

namespace {

// Refuses a weights file holding a layer group not in `expected`, as Keras
// refuses a layer count mismatch. `saved` holds up to expected.size() + 1
// names, so an extra group is among them when there is one.
absl::Status CheckSavedLayers(const KerasWeightsLayers& saved,
                              const std::set<std::string>& expected,
                              const std::string& file) {
  std::string unknown;
  for (const std::string& name : saved.names) {
    if (expected.count(name) == 0) {
      unknown = name;
      break;
    }
  }
  if (unknown.empty() && saved.count <= expected.size()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      file,
      ": Layer count mismatch when loading weights from file. Model "
      "expected ",
      expected.size(), " layers, found ", saved.count, " saved layers",
      unknown.empty() ? std::string()
                      : absl::StrCat(" ('layers/", unknown,
                                     "' is no layer of config.json)")));
}

}  // namespace

std::vector<std::string> WeightsPaths(const std::vector<Layer>& layers,
                                      bool functional) {
  std::map<std::string, int> used;
  std::vector<std::string> paths;
  for (const Layer& layer : layers) {
    const LayerKind* kind = FindLayerKind(layer.kind());
    std::string group;
    if (kind != nullptr) {
      group = kind->weights_group;
      // Keras's snake case of "InputLayer".
      if (functional && kind->is_input) group = "input_layer";
    }
    if (group.empty()) {
      paths.emplace_back();
      continue;
    }
    const int n = used[group]++;
    std::string path = n == 0 ? absl::StrCat("layers/", group)
                              : absl::StrCat("layers/", group, "_", n);
    if (!kind->weights_subgroup.empty()) {
      absl::StrAppend(&path, "/", kind->weights_subgroup);
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

absl::StatusOr<std::string> WeightsBytes(const ModelSnapshot& snap,
                                         const std::string& where) {
  for (const models_internal::SavedLayer& saved : snap.layers) {
    if (FindLayerKind(saved.layer.kind()) == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          where, ": layer '", saved.layer.name(), "' (", saved.layer.kind(),
          ") has no saving support (models/layer_registry.h)"));
    }
  }
  // A Functional's groups are named, and written, in Keras's layer order
  // (the order its config lists them in).
  std::vector<size_t> order;
  if (snap.class_name == "Functional") {
    order = KerasLayerOrder(snap);
  } else {
    for (size_t i = 0; i < snap.layers.size(); ++i) order.push_back(i);
  }
  std::vector<LayerWeights> weights;
  std::vector<Layer> layers;
  for (size_t i : order) layers.push_back(snap.layers[i].layer);
  const std::vector<std::string> paths =
      WeightsPaths(layers, snap.class_name == "Functional");
  for (size_t k = 0; k < order.size(); ++k) {
    if (!paths[k].empty()) {
      weights.push_back({paths[k], snap.layers[order[k]].values});
    }
  }
  if (!snap.optimizer_values.empty()) {
    weights.push_back({kOptimizerGroup, snap.optimizer_values});
  }
  absl::StatusOr<std::string> h5 = EncodeKerasWeights(weights);
  if (!h5.ok()) {
    return Annotate(h5.status(), where);
  }
  return h5;
}

absl::StatusOr<std::vector<Tensor>> DecodeModelWeights(
    const std::string& h5, const std::vector<Layer>& layers,
    const std::string& file) {
  return DecodeModelWeights(h5, layers, WeightsPaths(layers, false), file);
}

absl::StatusOr<std::vector<Tensor>> DecodeModelWeights(
    const std::string& h5, const std::vector<Layer>& layers,
    const std::vector<std::string>& paths, const std::string& file) {
  if (paths.size() != layers.size()) {
    return absl::InternalError(absl::StrCat("LoadModel: ", paths.size(),
                                            " weights groups for ",
                                            layers.size(), " layers"));
  }
  std::set<std::string> expected;
  std::vector<LayerWeightsSpec> specs;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].empty()) continue;
    // The layer's group under "layers" (a subgroup's path has one more part).
    const std::string group = paths[i].substr(sizeof("layers/") - 1);
    expected.insert(group.substr(0, group.find('/')));
    LayerWeightsSpec spec{.path = paths[i]};
    const BuiltLayer* built = SavingAccess::State(layers[i])->built();
    if (built == nullptr) {
      return absl::InternalError(absl::StrCat(
          "LoadModel: layer ", i, " of the created model is not built"));
    }
    for (const auto& v : built->variables) spec.shapes.push_back(v.shape);
    specs.push_back(std::move(spec));
  }
  // The layer groups are listed and checked in the same open of the image,
  // before any weight is read.
  absl::StatusOr<std::vector<std::vector<Tensor>>> values =
      DecodeKerasWeights(h5, specs, file,
                         {.check_layers =
                              [&](const KerasWeightsLayers& saved) {
                                return CheckSavedLayers(saved, expected, file);
                              },
                          .max_layer_names = expected.size() + 1});
  GG_RETURN_IF_ERROR(values.status());
  std::vector<Tensor> flat;
  for (auto& layer : *values) {
    for (Tensor& t : layer) flat.push_back(std::move(t));
  }
  return flat;
}

}  // namespace models_internal
}  // namespace graphgc
