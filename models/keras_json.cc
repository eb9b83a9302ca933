#include "models/keras_json.h"

#include <charconv>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace graphgc {
namespace models_internal {
namespace {

// Thrown by ParseJson's parser callback at the first value over the limits,
// which stops the parse there: `what` says which limit.
struct OverLimit {
  std::string what;
};

}  // namespace

std::string TypeName(const Json& j) {
  if (j.is_number_integer()) return "integer";
  if (j.is_number_float()) return "number";
  return j.type_name();
}

std::string Shown(const Json& j) {
  if (j.is_structured()) return TypeName(j);
  std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return absl::StrCat(TypeName(j), " ", text);
}

const Json* ConfigObject::Find(const char* key) const {
  auto it = json_.find(key);
  return it == json_.end() ? nullptr : &*it;
}

absl::Status ConfigObject::Error(const std::string& what) const {
  return absl::InvalidArgumentError(absl::StrCat(where_, ": ", what));
}

absl::Status ConfigObject::WrongType(const char* key, const char* want,
                                     const Json& got) const {
  return Error(
      absl::StrCat("field '", key, "' must be ", want, ", got ", Shown(got)));
}

absl::Status ConfigObject::Missing(const char* key) const {
  return Error(absl::StrCat("field '", key, "' is missing"));
}

absl::StatusOr<int64_t> ConfigObject::Int(const char* key) const {
  const Json* j = Find(key);
  if (j == nullptr) return Missing(key);
  if (!j->is_number_integer()) return WrongType(key, "an integer", *j);
  if (j->is_number_unsigned() &&
      j->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return WrongType(key, "an integer below 2^63", *j);
  }
  return j->get<int64_t>();
}

absl::StatusOr<std::string> ConfigObject::String(
    const char* key, std::optional<std::string> fallback) const {
  const Json* j = Find(key);
  if (j == nullptr || (fallback.has_value() && j->is_null())) {
    if (fallback.has_value()) return *fallback;
    return Missing(key);
  }
  if (!j->is_string()) return WrongType(key, "a string", *j);
  return j->get<std::string>();
}

absl::StatusOr<bool> ConfigObject::Bool(const char* key, bool fallback) const {
  const Json* j = Find(key);
  if (j == nullptr) return fallback;
  if (!j->is_boolean()) return WrongType(key, "true or false", *j);
  return j->get<bool>();
}

absl::StatusOr<float> ConfigObject::Float(const char* key,
                                          float fallback) const {
  const Json* j = Find(key);
  if (j == nullptr) return fallback;
  if (!j->is_number()) return WrongType(key, "a number", *j);
  return static_cast<float>(j->get<double>());
}

absl::StatusOr<ConfigObject> ConfigObject::Child(
    const char* key, const std::string& where) const {
  const Json* j = Find(key);
  if (j == nullptr) return Missing(key);
  if (!j->is_object()) return WrongType(key, "an object", *j);
  return ConfigObject(*j, where);
}

absl::StatusOr<std::vector<int64_t>> ConfigObject::IntList(
    const char* key, std::optional<std::vector<int64_t>> fallback,
    bool scalar_ok) const {
  const Json* j = Find(key);
  if (j == nullptr || (fallback.has_value() && j->is_null())) {
    if (fallback.has_value()) return *fallback;
    return Missing(key);
  }
  const char* want =
      scalar_ok ? "an integer or a list of integers" : "a list of integers";
  auto one = [&](const Json& v) -> std::optional<int64_t> {
    if (!v.is_number_integer()) return std::nullopt;
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return std::nullopt;
    }
    return v.get<int64_t>();
  };
  std::vector<int64_t> out;
  if (scalar_ok && j->is_number_integer()) {
    std::optional<int64_t> v = one(*j);
    if (!v.has_value()) return WrongType(key, want, *j);
    return std::vector<int64_t>{*v};
  }
  if (!j->is_array()) return WrongType(key, want, *j);
  for (const Json& v : *j) {
    std::optional<int64_t> x = one(v);
    if (!x.has_value()) return WrongType(key, want, *j);
    out.push_back(*x);
  }
  return out;
}

absl::StatusOr<uint64_t> ConfigObject::Seed(const char* key) const {
  const Json* j = Find(key);
  if (j == nullptr || j->is_null()) return 0;
  if (!j->is_number_integer() ||
      (!j->is_number_unsigned() && j->get<int64_t>() < 0)) {
    return WrongType(key, "a non-negative integer or null", *j);
  }
  return j->get<uint64_t>();
}

absl::Status ConfigObject::Only(const char* key, const Json& value) const {
  const Json* j = Find(key);
  if (j == nullptr || j->is_null() || *j == value) return absl::OkStatus();
  return Error(absl::StrCat("field '", key, "' must be ", value.dump(),
                            " (graphgc supports no other "
                            "value), got ",
                            Shown(*j)));
}

Json FloatJson(float value) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec != std::errc()) return static_cast<double>(value);
  *end = '\0';
  return std::strtod(buf, nullptr);
}

Json KerasObject(const char* module, const char* class_name, Json config) {
  return {{"module", module},
          {"class_name", class_name},
          {"config", std::move(config)},
          {"registered_name", nullptr}};
}

Json BatchShape(const TensorShape& shape) {
  Json out = Json::array({nullptr});
  for (int64_t d : shape.dim_sizes()) {
    out.push_back(d < 0 ? Json(nullptr) : Json(d));
  }
  return out;
}

Json CommonConfig(const std::string& name) {
  return {{"name", name}, {"trainable", true}, {"dtype", "float32"}};
}

Json InitializerJson(const char* class_name) {
  return KerasObject("keras.initializers", class_name,
                     std::string(class_name) == "GlorotUniform"
                         ? Json{{"seed", nullptr}}
                         : Json::object());
}

absl::StatusOr<Json> ParseJson(std::string_view text, const std::string& file) {
  if (static_cast<int64_t>(text.size()) > kMaxJsonBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(file, ": ", text.size(), " bytes, more than the ",
                     kMaxJsonBytes, " allowed"));
  }
  // Counts the values (keys and containers included) and the depth as the
  // parser meets them, before it builds each one.
  int64_t values = 0;
  const Json::parser_callback_t within_limits =
      [&values](int depth, Json::parse_event_t event, Json&) {
        using Event = Json::parse_event_t;
        if (event == Event::object_end || event == Event::array_end) {
          return true;
        }
        if (++values > kMaxJsonValues) {
          throw OverLimit{
              absl::StrCat("more than ", kMaxJsonValues, " values")};
        }
        // `depth` counts the containers around this one.
        if ((event == Event::object_start || event == Event::array_start) &&
            depth >= kMaxJsonDepth) {
          throw OverLimit{
              absl::StrCat("nested more than ", kMaxJsonDepth, " deep")};
        }
        return true;
      };
  // nlohmann reports errors by exception; they, and the callback's, are
  // caught here and go no further.
  try {
    return Json::parse(text.begin(), text.end(), within_limits);
  } catch (const OverLimit& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": ", e.what,
        " (config.json and signature.json "
        "hold at most ",
        kMaxJsonValues, " values nested at most ", kMaxJsonDepth, " deep)"));
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": not valid JSON: ", e.what()));
  }
}

absl::StatusOr<Json> ParseJsonObject(std::string_view text,
                                     const std::string& file) {
  absl::StatusOr<Json> root = ParseJson(text, file);
  if (root.ok() && !root->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": the top level must be an object, got ", Shown(*root)));
  }
  return root;
}

}  // namespace models_internal
}  // namespace graphgc
