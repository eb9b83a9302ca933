// models/model_config.h
//
// config.json as a whole: Keras's Sequential or Functional object (the
// model's name, its layers through the layer registry
// (models/layer_registry.h), a Functional's graph through
// models/functional_config.h, its compile settings through
// models/compile_config.h), written from a model's snapshot and parsed
// back into unbuilt layers. Private to models/.
#ifndef GRAPHGC_MODELS_MODEL_CONFIG_H_
#define GRAPHGC_MODELS_MODEL_CONFIG_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "models/functional.h"
#include "models/keras_json.h"
#include "models/layers.h"
#include "models/saving_access.h"
#include "models/sequential.h"
#include "serialize/graph_def.h"

namespace graphgc {
namespace models_internal {

// What config.json describes: nothing built yet.
struct ParsedConfig {
  std::string name;
  // A Sequential's stack; a Functional's layers in the config's order.
  std::vector<Layer> layers;
  std::optional<CompileOptions> compile;
  // class_name "Functional": its graph rebuilt as symbolic calls, and for
  // each of `layers` the per-sample shape its weights are made for.
  bool functional = false;
  std::vector<KerasTensor> inputs;
  std::vector<KerasTensor> outputs;
  std::vector<TensorShape> weights_input_shapes;
};

// config.json's text `text` (`file` names it in statuses) read, every field
// checked (see models/saving.h); builds nothing.
absl::StatusOr<ParsedConfig> ParseConfig(std::string_view text,
                                         const std::string& file);

// The model's Keras config (Sequential or Functional, as snap.class_name),
// its names as `renaming` has them (none renamed when empty). Every layer
// of `snap` must have a kind (FindKind).
Json ConfigJson(const ModelSnapshot& snap, const ScopeRenaming& renaming = {});

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_MODEL_CONFIG_H_
