// serialize/attr_codec.cc: attribute values to and from TensorFlow's protos.
#include "serialize/attr_codec.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "serialize/types.pb.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// The elements of `t` as little-endian bytes.
template <typename T>
std::string LittleEndianBytes(const Tensor& t) {
  absl::Span<const T> data = t.data<T>();
  std::string bytes(data.size() * sizeof(T), '\0');
  if (!data.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    for (size_t i = 0; i < bytes.size(); i += sizeof(T)) {
      std::reverse(bytes.begin() + i, bytes.begin() + i + sizeof(T));
    }
  }
  return bytes;
}

// Fills a tensor of `n` elements from a typed repeated field holding n
// values, or one value to repeat. The tensor is written in place: its bytes
// are the only copy made.
template <typename T, typename Field>
absl::StatusOr<Tensor> FromTypedField(const TensorShape& shape, int64_t n,
                                      const Field& field,
                                      absl::string_view field_name) {
  const int64_t have = field.size();
  if (have != n && !(have == 1 && n > 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor of shape ", shape.DebugString(), " holds ", n,
                     " elements but ", field_name, " has ", have, " values"));
  }
  GG_ASSIGN_OR_RETURN(Tensor t,
                      Tensor::Uninitialized(DataTypeToEnum<T>::value, shape));
  absl::Span<T> values = t.mutable_data<T>();
  for (int64_t i = 0; i < n; ++i) {
    values[i] = static_cast<T>(field.Get(have == 1 ? 0 : static_cast<int>(i)));
  }
  return t;
}

template <typename T>
absl::StatusOr<Tensor> FromContent(const TensorShape& shape, int64_t n,
                                   const std::string& content) {
  // n * sizeof(T) is at most kMaxImportedTensorBytes: TensorFromProto checked
  // it.
  const int64_t needed = n * int64_t{sizeof(T)};
  if (static_cast<int64_t>(content.size()) != needed) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor of shape ", shape.DebugString(), " needs ", needed,
                     " bytes of tensor_content, got ", content.size()));
  }
  GG_ASSIGN_OR_RETURN(Tensor t,
                      Tensor::Uninitialized(DataTypeToEnum<T>::value, shape));
  absl::Span<T> values = t.mutable_data<T>();
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = content[i] != 0;  // any non-zero byte is true
    }
  } else {
    if (n > 0) std::memcpy(values.data(), content.data(), content.size());
    if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
      char* bytes = reinterpret_cast<char*>(values.data());
      for (size_t i = 0; i < content.size(); i += sizeof(T)) {
        std::reverse(bytes + i, bytes + i + sizeof(T));
      }
    }
  }
  return t;
}

// The kind of value a ListValue holds: "list(int)", ... ("list" when empty,
// "" when it mixes kinds).
std::string ListKind(const proto::AttrValue::ListValue& list) {
  std::vector<std::string> kinds;
  if (list.s_size() > 0) kinds.push_back("list(string)");
  if (list.i_size() > 0) kinds.push_back("list(int)");
  if (list.f_size() > 0) kinds.push_back("list(float)");
  if (list.b_size() > 0) kinds.push_back("list(bool)");
  if (list.type_size() > 0) kinds.push_back("list(type)");
  if (list.shape_size() > 0) kinds.push_back("list(shape)");
  if (list.tensor_size() > 0) kinds.push_back("list(tensor)");
  if (list.func_size() > 0) kinds.push_back("list(func)");
  if (kinds.empty()) return "list";
  if (kinds.size() > 1) return "";
  return kinds[0];
}

}  // namespace

void ShapeToProto(const TensorShape& shape, proto::TensorShapeProto* out) {
  for (int64_t d : shape.dim_sizes()) out->add_dim()->set_size(d);
}

void TensorToProto(const Tensor& t, proto::TensorProto* out) {
  out->set_dtype(static_cast<proto::DataType>(t.dtype()));
  ShapeToProto(t.shape(), out->mutable_tensor_shape());
  switch (t.dtype()) {
    case DT_FLOAT:
      out->set_tensor_content(LittleEndianBytes<float>(t));
      break;
    case DT_INT32:
      out->set_tensor_content(LittleEndianBytes<int32_t>(t));
      break;
    case DT_INT64:
      out->set_tensor_content(LittleEndianBytes<int64_t>(t));
      break;
    case DT_BOOL:
      out->set_tensor_content(LittleEndianBytes<bool>(t));
      break;
    default:
      break;  // an uninitialized tensor: dtype and shape only
  }
}

void AttrToProto(const AttrValue& value, proto::AttrValue* out) {
  struct Visitor {
    proto::AttrValue* out;
    void operator()(int64_t v) const { out->set_i(v); }
    void operator()(float v) const { out->set_f(v); }
    void operator()(bool v) const { out->set_b(v); }
    void operator()(DataType v) const {
      out->set_type(static_cast<proto::DataType>(v));
    }
    void operator()(const std::string& v) const { out->set_s(v); }
    void operator()(const TensorShape& v) const {
      ShapeToProto(v, out->mutable_shape());
    }
    void operator()(const Tensor& v) const {
      TensorToProto(v, out->mutable_tensor());
    }
    void operator()(const std::vector<int64_t>& v) const {
      auto* list = out->mutable_list();
      for (int64_t x : v) list->add_i(x);
    }
    void operator()(const std::vector<float>& v) const {
      auto* list = out->mutable_list();
      for (float x : v) list->add_f(x);
    }
    void operator()(const std::vector<DataType>& v) const {
      auto* list = out->mutable_list();
      for (DataType x : v) list->add_type(static_cast<proto::DataType>(x));
    }
    void operator()(const std::vector<TensorShape>& v) const {
      auto* list = out->mutable_list();
      for (const TensorShape& x : v) ShapeToProto(x, list->add_shape());
    }
  };
  std::visit(Visitor{out}, value);
}

proto::TensorProto TensorAsProto(const Tensor& tensor) {
  proto::TensorProto proto;
  TensorToProto(tensor, &proto);
  return proto;
}

// A "type" value graphgc can hold; the status says what is wrong otherwise.
absl::StatusOr<DataType> DataTypeFromProto(int value) {
  switch (value) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_INT32:
    case DT_STRING:
    case DT_INT64:
    case DT_BOOL:
    case DT_RESOURCE:
      return static_cast<DataType>(value);
    default:
      break;
  }
  if (value == DT_INVALID) {
    return absl::InvalidArgumentError("dtype DT_INVALID");
  }
  if (!proto::DataType_IsValid(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad dtype enum value ", value));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "dtype ", proto::DataType_Name(static_cast<proto::DataType>(value)),
      " is not supported"));
}

absl::StatusOr<TensorShape> ShapeFromProto(const proto::TensorShapeProto& proto,
                                           bool allow_unknown) {
  if (proto.unknown_rank()) {
    return absl::InvalidArgumentError("shape of unknown rank is not supported");
  }
  std::vector<int64_t> dims;
  dims.reserve(proto.dim_size());
  for (const auto& d : proto.dim()) dims.push_back(d.size());
  GG_RETURN_IF_ERROR(TensorShape::Validate(dims, allow_unknown));
  return TensorShape(dims);
}

absl::StatusOr<Tensor> TensorFromProto(const proto::TensorProto& proto) {
  GG_ASSIGN_OR_RETURN(DataType dtype, DataTypeFromProto(proto.dtype()));
  if (!IsTensorDataType(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a constant cannot hold dtype ", DataTypeString(dtype)));
  }
  GG_ASSIGN_OR_RETURN(TensorShape shape,
                      ShapeFromProto(proto.tensor_shape(), false));
  GG_ASSIGN_OR_RETURN(const int64_t n, shape.CheckedNumElements());
  int64_t bytes = 0;
  if (!MultiplySizes(n, DataTypeSize(dtype), &bytes, kMaxImportedTensorBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor of shape ", shape.DebugString(), " is larger than 2 GiB"));
  }
  const bool content = !proto.tensor_content().empty();
  switch (dtype) {
    case DT_FLOAT:
      return content ? FromContent<float>(shape, n, proto.tensor_content())
                     : FromTypedField<float>(shape, n, proto.float_val(),
                                             "float_val");
    case DT_INT32:
      return content ? FromContent<int32_t>(shape, n, proto.tensor_content())
                     : FromTypedField<int32_t>(shape, n, proto.int_val(),
                                               "int_val");
    case DT_INT64:
      return content ? FromContent<int64_t>(shape, n, proto.tensor_content())
                     : FromTypedField<int64_t>(shape, n, proto.int64_val(),
                                               "int64_val");
    case DT_BOOL:
      return content
                 ? FromContent<bool>(shape, n, proto.tensor_content())
                 : FromTypedField<bool>(shape, n, proto.bool_val(), "bool_val");
    default:
      return absl::InternalError("unreachable dtype");
  }
}

// TensorFlow's name of the attr type a proto value holds.
std::string ProtoAttrKind(const proto::AttrValue& v) {
  switch (v.value_case()) {
    case proto::AttrValue::kS:
      return "string";
    case proto::AttrValue::kI:
      return "int";
    case proto::AttrValue::kF:
      return "float";
    case proto::AttrValue::kB:
      return "bool";
    case proto::AttrValue::kType:
      return "type";
    case proto::AttrValue::kShape:
      return "shape";
    case proto::AttrValue::kTensor:
      return "tensor";
    case proto::AttrValue::kList: {
      std::string kind = ListKind(v.list());
      return kind.empty() ? "list of mixed types" : kind;
    }
    case proto::AttrValue::kFunc:
      return "func";
    case proto::AttrValue::kPlaceholder:
      return "placeholder";
    case proto::AttrValue::VALUE_NOT_SET:
      break;
  }
  return "no value";
}

// Converts `v` to graphgc's AttrValue of TensorFlow attr type `type` (as
// AttrTypeName spells it); an empty list converts to any list type.
absl::StatusOr<AttrValue> AttrFromProto(const proto::AttrValue& v,
                                        const std::string& type) {
  const std::string kind = ProtoAttrKind(v);
  const bool matches =
      kind == type || (kind == "list" && absl::StartsWith(type, "list("));
  if (!matches) {
    return absl::InvalidArgumentError(
        absl::StrCat("must be a ", type, ", got a ", kind));
  }
  if (type == "int") return AttrValue(int64_t{v.i()});
  if (type == "float") return AttrValue(v.f());
  if (type == "bool") return AttrValue(v.b());
  if (type == "string") return AttrValue(std::string(v.s()));
  if (type == "type") {
    GG_ASSIGN_OR_RETURN(DataType t, DataTypeFromProto(v.type()));
    return AttrValue(t);
  }
  if (type == "shape") {
    GG_ASSIGN_OR_RETURN(TensorShape s, ShapeFromProto(v.shape(), true));
    return AttrValue(std::move(s));
  }
  if (type == "tensor") {
    GG_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(v.tensor()));
    return AttrValue(std::move(t));
  }
  const auto& list = v.list();
  if (type == "list(int)") {
    return AttrValue(std::vector<int64_t>(list.i().begin(), list.i().end()));
  }
  if (type == "list(float)") {
    return AttrValue(std::vector<float>(list.f().begin(), list.f().end()));
  }
  if (type == "list(type)") {
    std::vector<DataType> types;
    for (int t : list.type()) {
      GG_ASSIGN_OR_RETURN(DataType d, DataTypeFromProto(t));
      types.push_back(d);
    }
    return AttrValue(std::move(types));
  }
  if (type == "list(shape)") {
    std::vector<TensorShape> shapes;
    for (const auto& s : list.shape()) {
      GG_ASSIGN_OR_RETURN(TensorShape shape, ShapeFromProto(s, true));
      shapes.push_back(std::move(shape));
    }
    return AttrValue(std::move(shapes));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("attr type ", type, " is not supported"));
}

}  // namespace graphgc
