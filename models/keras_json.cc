#include "models/keras_json.h"

#include <charconv>
#include <cstdlib>
#include <system_error>

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

// A short rendering of a wrong value: scalars as written, containers by
// their type only (never dumped: a hostile file may nest them deeply).
std::string Shown(const Json& j) {
  if (j.is_structured()) return TypeName(j);
  std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return absl::StrCat(TypeName(j), " ", text);
}

Json FloatJson(float value) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec != std::errc()) return static_cast<double>(value);
  *end = '\0';
  return std::strtod(buf, nullptr);
}

// A Keras-serialised object: {"module", "class_name", "config",
// "registered_name"}.
Json KerasObject(const char* module, const char* class_name, Json config) {
  return {{"module", module},
          {"class_name", class_name},
          {"config", std::move(config)},
          {"registered_name", nullptr}};
}

// Keras's batch shape: null for the batch and for unknown dimensions.
Json BatchShape(const TensorShape& shape) {
  Json out = Json::array({nullptr});
  for (int64_t d : shape.dim_sizes()) {
    out.push_back(d < 0 ? Json(nullptr) : Json(d));
  }
  return out;
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
