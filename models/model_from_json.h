// models/model_from_json.h
//
// ModelFromJson (defined in saving.cc, beside LoadModel, whose checks and
// budget it shares): a new model built from its Keras JSON config, what Keras
// 3's `keras.models.model_from_json(json)` and `Model.from_config(config)`
// do: the text ModelToJson (models/saving.h) gives and Save writes as
// config.json, of a Sequential or a Functional. The model gets fresh
// weights (none are read); it is compiled with the config's
// "compile_config" when there is one and options.compile is set, as Keras's
// deserialization compiles it.
//
// The text is untrusted: it is parsed and checked whole as LoadModel checks
// config.json (every field's type, the layer classes and options, a
// Functional's graph; at most 16 MiB of text, 2^18 JSON values, 64 deep),
// and the float32 weights its layers declare are refused over
// options.max_bytes (ResourceExhausted) before anything is built. Errors
// are InvalidArgument naming `file` (what the caller calls the text) and
// the field. A failed build leaves nothing referenced on the graph.
//
// Thread safety: may be called from any thread.
//
// Example:
//   GG_ASSIGN_OR_RETURN(std::string json, ModelToJson(model));
//   GG_ASSIGN_OR_RETURN(LoadedModel copy, ModelFromJson(json));
#ifndef GRAPHGC_MODELS_MODEL_FROM_JSON_H_
#define GRAPHGC_MODELS_MODEL_FROM_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "models/saving.h"

namespace graphgc {

absl::StatusOr<LoadedModel> ModelFromJson(std::string_view json,
                                          LoadOptions options = {},
                                          const std::string& file = "json");

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_MODEL_FROM_JSON_H_
