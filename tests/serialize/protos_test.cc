// Wire compatibility of our generated proto classes with TensorFlow's: the
// bytes below are written by hand from the field numbers and types published
// in TensorFlow's graph.proto, node_def.proto, attr_value.proto,
// tensor.proto, tensor_shape.proto, versions.proto, summary.proto and
// event.proto, not produced by our own classes.
#include <cstdint>
#include <cstring>
#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "serialize/attr_value.pb.h"
#include "serialize/event.pb.h"
#include "serialize/graph.pb.h"
#include "serialize/node_def.pb.h"
#include "serialize/summary.pb.h"
#include "serialize/tensor.pb.h"
#include "serialize/types.pb.h"

namespace graphgc {
namespace {

// Protobuf wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

std::string Key(int field, int wire_type) {
  return Varint((static_cast<uint64_t>(field) << 3) | wire_type);
}

std::string VarintField(int field, uint64_t v) {
  return Key(field, kVarint) + Varint(v);
}

std::string Bytes(int field, const std::string& payload) {
  return Key(field, kLengthDelimited) + Varint(payload.size()) + payload;
}

std::string LittleEndian(const void* p, size_t n) {
  std::string out(n, '\0');
  std::memcpy(out.data(), p, n);  // x86-64 and aarch64 are little-endian
  return out;
}

std::string Fixed32Field(int field, float v) {
  return Key(field, kFixed32) + LittleEndian(&v, 4);
}

std::string Fixed64Field(int field, double v) {
  return Key(field, kFixed64) + LittleEndian(&v, 8);
}

// map<string, AttrValue> entry: key = 1, value = 2.
std::string AttrEntry(int map_field, const std::string& key,
                      const std::string& attr_value) {
  return Bytes(map_field, Bytes(1, key) + Bytes(2, attr_value));
}

// A three-node graph: x = Placeholder, w = Const([1, 2, 3]), y = MatMul(x, w)
// with a control input, plus versions {producer: 1087}. Fields appear in
// field-number order, as protobuf serializes them.
std::string HandEncodedGraphDef() {
  // NodeDef: name = 1, op = 2, input = 3, device = 4, attr = 5.
  // AttrValue: b = 5, type = 6, shape = 7, tensor = 8.
  const std::string x =
      Bytes(1, "x") + Bytes(2, "Placeholder") +
      AttrEntry(5, "dtype", VarintField(6, 1 /*DT_FLOAT*/)) +
      AttrEntry(
          5, "shape",
          Bytes(7, /*TensorShapeProto.dim*/ Bytes(2, VarintField(1, ~0ull)) +
                       Bytes(2, VarintField(1, 3))));
  std::string floats;
  for (float f : {1.0f, 2.0f, 3.0f}) floats += LittleEndian(&f, 4);
  // TensorProto: dtype = 1, tensor_shape = 2, float_val = 5 (packed).
  const std::string tensor = VarintField(1, 1) +
                             Bytes(2, Bytes(2, VarintField(1, 3))) +
                             Bytes(5, floats);
  const std::string w = Bytes(1, "w") + Bytes(2, "Const") +
                        AttrEntry(5, "value", Bytes(8, tensor));
  const std::string y = Bytes(1, "y") + Bytes(2, "MatMul") + Bytes(3, "x") +
                        Bytes(3, "w:0") + Bytes(3, "^w") + Bytes(4, "/cpu:0") +
                        AttrEntry(5, "transpose_a", VarintField(5, 1));
  // GraphDef: node = 1, versions = 4. VersionDef: producer = 1.
  return Bytes(1, x) + Bytes(1, w) + Bytes(1, y) +
         Bytes(4, VarintField(1, 1087));
}

TEST(Protos, HandEncodedGraphDefDecodesToTheExpectedNodes) {
  proto::GraphDef g;
  ASSERT_TRUE(g.ParseFromString(HandEncodedGraphDef()));
  ASSERT_EQ(g.node_size(), 3);
  EXPECT_EQ(g.versions().producer(), 1087);

  const proto::NodeDef& x = g.node(0);
  EXPECT_EQ(x.name(), "x");
  EXPECT_EQ(x.op(), "Placeholder");
  EXPECT_EQ(x.attr().at("dtype").type(), proto::DT_FLOAT);
  const proto::TensorShapeProto& shape = x.attr().at("shape").shape();
  ASSERT_EQ(shape.dim_size(), 2);
  EXPECT_EQ(shape.dim(0).size(), -1);
  EXPECT_EQ(shape.dim(1).size(), 3);

  const proto::NodeDef& w = g.node(1);
  EXPECT_EQ(w.op(), "Const");
  const proto::TensorProto& t = w.attr().at("value").tensor();
  EXPECT_EQ(t.dtype(), proto::DT_FLOAT);
  ASSERT_EQ(t.tensor_shape().dim_size(), 1);
  EXPECT_EQ(t.tensor_shape().dim(0).size(), 3);
  ASSERT_EQ(t.float_val_size(), 3);
  EXPECT_EQ(t.float_val(2), 3.0f);

  const proto::NodeDef& y = g.node(2);
  EXPECT_EQ(y.op(), "MatMul");
  ASSERT_EQ(y.input_size(), 3);
  EXPECT_EQ(y.input(0), "x");
  EXPECT_EQ(y.input(1), "w:0");
  EXPECT_EQ(y.input(2), "^w");
  EXPECT_EQ(y.device(), "/cpu:0");
  EXPECT_TRUE(y.attr().at("transpose_a").b());
}

// Map entries come out in hash order unless serialization is deterministic
// (then sorted by key, as written above).
TEST(Protos, GraphDefSerializesToTheHandEncodedBytes) {
  proto::GraphDef g;
  ASSERT_TRUE(g.ParseFromString(HandEncodedGraphDef()));
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    ASSERT_TRUE(g.SerializeToCodedStream(&coded));
  }
  EXPECT_EQ(out, HandEncodedGraphDef());
}

TEST(Protos, FieldsWeLeaveOutSurviveARoundTrip) {
  // GraphDef.library = 2 (a FunctionDefLibrary) is not in our graph.proto.
  const std::string library = Bytes(2, Bytes(1, "opaque function"));
  proto::GraphDef g;
  ASSERT_TRUE(g.ParseFromString(HandEncodedGraphDef() + library));
  EXPECT_EQ(g.node_size(), 3);
  std::string out;
  ASSERT_TRUE(g.SerializeToString(&out));
  EXPECT_NE(out.find(library), std::string::npos);
}

TEST(Protos, HandEncodedScalarEventDecodes) {
  // Event: wall_time = 1 (double), step = 2, summary = 5.
  // Summary: value = 1. Summary.Value: tag = 1, simple_value = 2,
  // metadata = 9. SummaryMetadata: plugin_data = 1 {plugin_name = 1}.
  const std::string value = Bytes(1, "epoch_loss") + Fixed32Field(2, 0.5f) +
                            Bytes(9, Bytes(1, Bytes(1, "scalars")));
  const std::string bytes = Fixed64Field(1, 1700000000.25) +
                            VarintField(2, 42) + Bytes(5, Bytes(1, value));
  proto::Event e;
  ASSERT_TRUE(e.ParseFromString(bytes));
  EXPECT_EQ(e.wall_time(), 1700000000.25);
  EXPECT_EQ(e.step(), 42);
  ASSERT_TRUE(e.has_summary());
  ASSERT_EQ(e.summary().value_size(), 1);
  const proto::Summary::Value& v = e.summary().value(0);
  EXPECT_EQ(v.tag(), "epoch_loss");
  EXPECT_EQ(v.simple_value(), 0.5f);
  EXPECT_EQ(v.metadata().plugin_data().plugin_name(), "scalars");
}

TEST(Protos, HandEncodedFileVersionAndGraphEventsDecode) {
  // Event.file_version = 3 (string), Event.graph_def = 4 (bytes).
  proto::Event version;
  ASSERT_TRUE(version.ParseFromString(Fixed64Field(1, 1.0) +
                                      Bytes(3, "brain.Event:2")));
  EXPECT_EQ(version.file_version(), "brain.Event:2");

  proto::Event graph;
  ASSERT_TRUE(graph.ParseFromString(Bytes(4, HandEncodedGraphDef())));
  ASSERT_EQ(graph.what_case(), proto::Event::kGraphDef);
  proto::GraphDef g;
  ASSERT_TRUE(g.ParseFromString(graph.graph_def()));
  EXPECT_EQ(g.node_size(), 3);
}

TEST(Protos, DataTypeNumbersMatchTensorFlow) {
  EXPECT_EQ(proto::DT_INVALID, 0);
  EXPECT_EQ(proto::DT_FLOAT, 1);
  EXPECT_EQ(proto::DT_DOUBLE, 2);
  EXPECT_EQ(proto::DT_INT32, 3);
  EXPECT_EQ(proto::DT_STRING, 7);
  EXPECT_EQ(proto::DT_INT64, 9);
  EXPECT_EQ(proto::DT_BOOL, 10);
  EXPECT_EQ(proto::DT_RESOURCE, 20);
  EXPECT_EQ(proto::DT_FLOAT_REF, 101);
}

TEST(Protos, AttrListValueUsesPackedFields) {
  // AttrValue.list = 1; ListValue.i = 3 (packed int64), s = 2 (bytes).
  const std::string list = Bytes(2, "a") + Bytes(3, Varint(1) + Varint(2));
  proto::AttrValue a;
  ASSERT_TRUE(a.ParseFromString(Bytes(1, list)));
  ASSERT_EQ(a.list().i_size(), 2);
  EXPECT_EQ(a.list().i(1), 2);
  EXPECT_EQ(a.list().s(0), "a");
}

}  // namespace
}  // namespace graphgc
