// models/compile_config.h
//
// The compile settings in config.json: Keras's "compile_config" object (the
// optimizer, the loss, the metrics) written from a model's settings and
// read back into CompileOptions. Private to models/.
#ifndef GRAPHGC_MODELS_COMPILE_CONFIG_H_
#define GRAPHGC_MODELS_COMPILE_CONFIG_H_

#include "absl/status/statusor.h"
#include "models/keras_json.h"
#include "models/saving_access.h"
#include "models/sequential.h"

namespace graphgc {
namespace models_internal {

// Keras's "compile_config" for `compile`.
Json CompileJson(const SavedCompile& compile);

// The settings a "compile_config" object holds; optimizer and loss may be
// Keras objects or their string names ("adam", "mse"). Errors name the
// field (InvalidArgument), as Object's do.
absl::StatusOr<CompileOptions> ReadCompile(const Object& compile);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_COMPILE_CONFIG_H_
