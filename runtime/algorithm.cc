#include "runtime/algorithm.h"

#include <array>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace graphgc {

namespace {

// Each byte's class for the node-name rule: may start a name (kFirst), may
// follow (kRest), is '/' (kSlash).
constexpr uint8_t kFirst = 1, kRest = 2, kSlash = 4;
constexpr std::array<uint8_t, 256> kNameChars = [] {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
        (c >= '0' && c <= '9') || c == '.') {
      classes[c] = kFirst | kRest;
    } else if (c == '_' || c == '-') {
      classes[c] = kRest;
    } else if (c == '/') {
      classes[c] = kRest | kSlash;
    }
  }
  return classes;
}();

uint8_t NameCharClass(char c) {
  return kNameChars[static_cast<unsigned char>(c)];
}

}  // namespace

bool IsValidNodeName(absl::string_view name) {
  if (name.empty() || name.back() == '/') return false;
  uint8_t previous = NameCharClass(name[0]);
  if ((previous & kFirst) == 0) return false;
  // One table load per byte and no branch but the loop's: every name a
  // node is made with passes here, so a compare chain per byte shows in
  // AddNode's profile. `all` keeps the classes every byte has, `repeated`
  // those of two bytes in a row (kSlash: "//").
  uint8_t all = kRest;
  uint8_t repeated = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    const uint8_t c = NameCharClass(name[i]);
    all &= c;
    repeated |= c & previous;
    previous = c;
  }
  return (all & kRest) != 0 && (repeated & kSlash) == 0;
}

absl::Status ValidateNodeName(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("empty node name");
  if (!IsValidNodeName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid node name '", name, "': ", kNodeNameRule));
  }
  return absl::OkStatus();
}

}  // namespace graphgc
