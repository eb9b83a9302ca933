// models/keras_json.h
//
// JSON for the saving files (config.json, signature.json): bounded parsing
// (ParseJson), typed reading whose errors name the file and the field
// (Object), and the shapes Keras's JSON repeats (KerasObject, BatchShape,
// FloatJson). Private to models/.
#ifndef GRAPHGC_MODELS_KERAS_JSON_H_
#define GRAPHGC_MODELS_KERAS_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
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
class Object {
 public:
  Object(const Json& json, std::string where)
      : json_(json), where_(std::move(where)) {}

  const std::string& where() const { return where_; }

  // The field, or null when absent.
  const Json* Find(const char* key) const {
    auto it = json_.find(key);
    return it == json_.end() ? nullptr : &*it;
  }

  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(where_, ": ", what));
  }
  absl::Status WrongType(const char* key, const char* want,
                         const Json& got) const {
    return Error(
        absl::StrCat("field '", key, "' must be ", want, ", got ", Shown(got)));
  }
  absl::Status Missing(const char* key) const {
    return Error(absl::StrCat("field '", key, "' is missing"));
  }

  absl::StatusOr<int64_t> Int(const char* key) const {
    const Json* j = Find(key);
    if (j == nullptr) return Missing(key);
    if (!j->is_number_integer()) return WrongType(key, "an integer", *j);
    if (j->is_number_unsigned() &&
        j->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return WrongType(key, "an integer below 2^63", *j);
    }
    return j->get<int64_t>();
  }
  absl::StatusOr<std::string> String(
      const char* key,
      std::optional<std::string> fallback = std::nullopt) const {
    const Json* j = Find(key);
    if (j == nullptr || (fallback.has_value() && j->is_null())) {
      if (fallback.has_value()) return *fallback;
      return Missing(key);
    }
    if (!j->is_string()) return WrongType(key, "a string", *j);
    return j->get<std::string>();
  }
  absl::StatusOr<bool> Bool(const char* key, bool fallback) const {
    const Json* j = Find(key);
    if (j == nullptr) return fallback;
    if (!j->is_boolean()) return WrongType(key, "true or false", *j);
    return j->get<bool>();
  }
  absl::StatusOr<float> Float(const char* key, float fallback) const {
    const Json* j = Find(key);
    if (j == nullptr) return fallback;
    if (!j->is_number()) return WrongType(key, "a number", *j);
    return static_cast<float>(j->get<double>());
  }
  // A nested object, required.
  absl::StatusOr<Object> Child(const char* key,
                               const std::string& where) const {
    const Json* j = Find(key);
    if (j == nullptr) return Missing(key);
    if (!j->is_object()) return WrongType(key, "an object", *j);
    return Object(*j, where);
  }

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
