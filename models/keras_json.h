// models/keras_json.h
//
// Keras JSON (config.json, signature.json): bounded parsing (ParseJson),
// typed reading (ConfigObject) and writing as Keras writes it; what the
// layer kinds' config codecs (models/layers/*.cc) and the saving codecs
// (model_config, compile_config, signature) share. Every reading error names
// where the object is ("<file>: layers[1] (Dense) config") and the field.
#ifndef GRAPHGC_MODELS_KERAS_JSON_H_
#define GRAPHGC_MODELS_KERAS_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

using Json = nlohmann::json;

// config.json and signature.json are small: a model of thousands of layers
// is well under a megabyte, some 35 values a layer, nested 6 deep. The value
// count bounds what parsing builds (each value a node of at most about 100
// bytes) whatever the text holds; the depth bounds recursion over the tree.
constexpr int64_t kMaxJsonBytes = int64_t{16} << 20;
constexpr int64_t kMaxJsonValues = int64_t{1} << 18;
constexpr int kMaxJsonDepth = 64;

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

// `text` parsed, or a status naming `file`: ResourceExhausted over
// kMaxJsonBytes bytes; InvalidArgument for text that is not JSON, or that
// holds more than kMaxJsonValues values or nests deeper than kMaxJsonDepth
// (parsing stops at the first value over either limit).
absl::StatusOr<Json> ParseJson(std::string_view text, const std::string& file);

// ParseJson's value when it is an object, else InvalidArgument "<file>: the
// top level must be an object, got ...".
absl::StatusOr<Json> ParseJsonObject(std::string_view text,
                                     const std::string& file);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_KERAS_JSON_H_
