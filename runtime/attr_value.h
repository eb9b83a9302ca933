// runtime/attr_value.h
//
// AttrValue and AttrMap: a node's attributes, named as TensorFlow names them
// ("T", "dtype", "shape", "value", "transpose_a", ...). AttrMap is ordered by
// name, so everything built from it (exports, debug strings) is
// deterministic. GetAttr<T> reads one with a status naming the attribute
// when it is missing or of another type.
#ifndef GRAPHGC_RUNTIME_ATTR_VALUE_H_
#define GRAPHGC_RUNTIME_ATTR_VALUE_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/tensor.h"

namespace graphgc {

using AttrValue =
    std::variant<int64_t, float, bool, DataType, std::string, TensorShape,
                 Tensor, std::vector<int64_t>, std::vector<float>,
                 std::vector<DataType>, std::vector<TensorShape>>;

using AttrMap = absl::btree_map<std::string, AttrValue>;

// "int", "float", "bool", "type", "string", "shape", "tensor", "list(int)",
// ... as TensorFlow spells attribute types.
absl::string_view AttrTypeName(const AttrValue& value);

template <typename T>
absl::StatusOr<T> GetAttr(const AttrMap& attrs, absl::string_view name) {
  auto it = attrs.find(name);  // heterogeneous: no string is built
  if (it == attrs.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute '", name, "' is missing"));
  }
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  return absl::InvalidArgumentError(
      absl::StrCat("attribute '", name, "' is a ", AttrTypeName(it->second)));
}

// The attribute's value, or `fallback` when it is absent or of another type.
template <typename T>
T GetAttrOr(const AttrMap& attrs, absl::string_view name, T fallback) {
  auto it = attrs.find(name);  // heterogeneous: no string is built
  if (it == attrs.end()) return fallback;
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  return fallback;
}

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_ATTR_VALUE_H_
