// serialize/attr_codec.h
//
// Attribute values between graphgc and TensorFlow's protos: TensorShape,
// Tensor and AttrValue to TensorShapeProto, TensorProto and proto AttrValue
// and back. One job: the value codec; which attributes a node has, and what
// they mean, is the exporter's and importer's business (graph_def.h).
//
// Writing never fails: tensors go out as TensorFlow writes constants
// (dtype, shape, values little-endian in tensor_content). Reading checks
// everything and says what is wrong in an InvalidArgument without naming a
// node (callers prefix that): dtypes graphgc cannot hold, bad shapes,
// tensors over 2 GiB, value counts that do not match the shape.
//
// Thread safety: free functions over the caller's values; no shared state.
#ifndef GRAPHGC_SERIALIZE_ATTR_CODEC_H_
#define GRAPHGC_SERIALIZE_ATTR_CODEC_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/attr_value.h"
#include "runtime/tensor.h"
#include "serialize/attr_value.pb.h"
#include "serialize/tensor.pb.h"
#include "serialize/tensor_shape.pb.h"

namespace graphgc {

// Largest tensor an import may create (TensorFlow's 2 GiB proto limit).
inline constexpr int64_t kMaxImportedTensorBytes = int64_t{1} << 31;

// Appends `shape`'s dimensions to `out` (-1 for unknown ones).
void ShapeToProto(const TensorShape& shape, proto::TensorShapeProto* out);
// Writes `t` into `out`: dtype, shape and, for an initialized tensor, its
// values little-endian in tensor_content.
void TensorToProto(const Tensor& t, proto::TensorProto* out);
// `tensor` as the TensorProto export writes for a constant: dtype, shape,
// and the values little-endian in tensor_content.
proto::TensorProto TensorAsProto(const Tensor& tensor);
// Writes `value` into `out` (lists as ListValue).
void AttrToProto(const AttrValue& value, proto::AttrValue* out);

// A "type" value graphgc can hold (InvalidArgument naming it otherwise).
absl::StatusOr<DataType> DataTypeFromProto(int value);
// A shape; -1 dimensions only with `allow_unknown`, never unknown rank.
absl::StatusOr<TensorShape> ShapeFromProto(const proto::TensorShapeProto& proto,
                                           bool allow_unknown);
// A constant's tensor: a typed field may hold the full element count or one
// value repeated to fill the shape; tensor_content must hold exactly the
// tensor's bytes; at most kMaxImportedTensorBytes.
absl::StatusOr<Tensor> TensorFromProto(const proto::TensorProto& proto);
// TensorFlow's name of the attr type a proto value holds ("int",
// "list(float)", ...; "list" for an empty list, "no value" when unset).
std::string ProtoAttrKind(const proto::AttrValue& v);
// Converts `v` to graphgc's AttrValue of TensorFlow attr type `type` (as
// AttrTypeName spells it); an empty list converts to any list type.
absl::StatusOr<AttrValue> AttrFromProto(const proto::AttrValue& v,
                                        const std::string& type);

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_ATTR_CODEC_H_
