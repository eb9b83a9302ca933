// models/layer_config.h
//
// Keras config JSON, read with type checks and written as Keras writes it:
// what the layer kinds' config codecs (models/layers/*.cc) and the model
// config codec (models/saving.cc) share. Every reading error names where the
// object is ("<file>: layers[1] (Dense) config") and the field.
#ifndef GRAPHGC_MODELS_LAYER_CONFIG_H_
#define GRAPHGC_MODELS_LAYER_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

using Json = nlohmann::json;

// A value's JSON type, for messages ("integer" apart from "number").
std::string TypeName(const Json& j);

// A short rendering of a wrong value: scalars as written, containers by
// their type only (never dumped: a hostile file may nest them deeply).
std::string Shown(const Json& j);

// A JSON object and where it is ("<file>: layers[1] (Dense) config").
class ConfigObject {
 public:
  ConfigObject(const Json& json, std::string where)
      : json_(json), where_(std::move(where)) {}

  const std::string& where() const { return where_; }

  // The field, or null when absent.
  const Json* Find(const char* key) const;

  absl::Status Error(const std::string& what) const;
  absl::Status WrongType(const char* key, const char* want,
                         const Json& got) const;
  absl::Status Missing(const char* key) const;

  absl::StatusOr<int64_t> Int(const char* key) const;
  // With a fallback, an absent or null field is the fallback.
  absl::StatusOr<std::string> String(
      const char* key,
      std::optional<std::string> fallback = std::nullopt) const;
  absl::StatusOr<bool> Bool(const char* key, bool fallback) const;
  absl::StatusOr<float> Float(const char* key, float fallback) const;
  // A nested object, required.
  absl::StatusOr<ConfigObject> Child(const char* key,
                                     const std::string& where) const;
  // A list of integers (Keras's tuples: kernel_size, strides, pool_size,
  // target_shape), or with `scalar_ok` one integer (Keras takes 3 for (3,
  // 3)); absent or null: `fallback`, or Missing without one.
  absl::StatusOr<std::vector<int64_t>> IntList(
      const char* key, std::optional<std::vector<int64_t>> fallback,
      bool scalar_ok) const;
  // A seed: a non-negative integer; absent or null: 0 (a drawn seed).
  absl::StatusOr<uint64_t> Seed(const char* key) const;
  // Refuses a Keras option graphgc does not implement unless it has the one
  // value graphgc implements (absent or null is fine too).
  absl::Status Only(const char* key, const Json& value) const;

 private:
  const Json& json_;
  std::string where_;
};

// A float as the shortest decimal that reads back as the same float (0.001f
// is written 0.001, not 0.0010000000474974513).
Json FloatJson(float value);

// A Keras-serialised object: {"module", "class_name", "config",
// "registered_name"}.
Json KerasObject(const char* module, const char* class_name, Json config);

// Keras's batch shape: null for the batch and for unknown dimensions.
Json BatchShape(const TensorShape& shape);

// The fields every layer's config starts with: name, trainable, dtype.
Json CommonConfig(const std::string& name);

// A Keras initializer object ("GlorotUniform" with a null seed, "Zeros").
Json InitializerJson(const char* class_name);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYER_CONFIG_H_
