#include "runtime/algorithm.h"

#include "absl/strings/str_cat.h"

namespace graphgc {

bool IsValidNodeName(absl::string_view name) {
  auto first_ok = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '.';
  };
  auto rest_ok = [&](char c) {
    return first_ok(c) || c == '_' || c == '-' || c == '/';
  };
  if (name.empty() || !first_ok(name[0]) || name.back() == '/') return false;
  for (size_t i = 1; i < name.size(); ++i) {
    if (!rest_ok(name[i]) || (name[i] == '/' && name[i - 1] == '/')) {
      return false;
    }
  }
  return true;
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
