#include "runtime/attr_value.h"

namespace graphgc {

absl::string_view AttrTypeName(const AttrValue& value) {
  struct Visitor {
    absl::string_view operator()(int64_t) const { return "int"; }
    absl::string_view operator()(float) const { return "float"; }
    absl::string_view operator()(bool) const { return "bool"; }
    absl::string_view operator()(DataType) const { return "type"; }
    absl::string_view operator()(const std::string&) const { return "string"; }
    absl::string_view operator()(const TensorShape&) const { return "shape"; }
    absl::string_view operator()(const Tensor&) const { return "tensor"; }
    absl::string_view operator()(const std::vector<int64_t>&) const {
      return "list(int)";
    }
    absl::string_view operator()(const std::vector<float>&) const {
      return "list(float)";
    }
    absl::string_view operator()(const std::vector<DataType>&) const {
      return "list(type)";
    }
    absl::string_view operator()(const std::vector<TensorShape>&) const {
      return "list(shape)";
    }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace graphgc
