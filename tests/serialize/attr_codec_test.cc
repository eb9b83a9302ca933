#include "serialize/attr_codec.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "serialize/types.pb.h"

namespace graphgc {
namespace {

TEST(TensorAsProto, WritesDtypeShapeAndLittleEndianContent) {
  Tensor t =
      Tensor::FromData<int32_t>({2}, std::vector<int32_t>{1, 258}).value();
  proto::TensorProto p = TensorAsProto(t);
  EXPECT_EQ(p.dtype(), proto::DT_INT32);
  ASSERT_EQ(p.tensor_shape().dim_size(), 1);
  EXPECT_EQ(p.tensor_shape().dim(0).size(), 2);
  EXPECT_EQ(p.tensor_content(), std::string("\x01\0\0\0\x02\x01\0\0", 8));
}

TEST(TensorFromProto, ReadsBackWhatTensorAsProtoWrote) {
  Tensor t = Tensor::FromData<float>({2, 2}, std::vector<float>{1, -2, 3.5f, 0})
                 .value();
  Tensor back = TensorFromProto(TensorAsProto(t)).value();
  EXPECT_EQ(back.dtype(), DT_FLOAT);
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(
      std::vector<float>(back.data<float>().begin(), back.data<float>().end()),
      (std::vector<float>{1, -2, 3.5f, 0}));
}

TEST(TensorFromProto, RepeatsASingleTypedValueToFillTheShape) {
  proto::TensorProto p;
  p.set_dtype(proto::DT_INT64);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  p.add_int64_val(7);
  Tensor t = TensorFromProto(p).value();
  EXPECT_EQ(
      std::vector<int64_t>(t.data<int64_t>().begin(), t.data<int64_t>().end()),
      (std::vector<int64_t>{7, 7, 7}));
}

TEST(TensorFromProto, RefusesContentOfTheWrongSize) {
  proto::TensorProto p;
  p.set_dtype(proto::DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.set_tensor_content(std::string(4, '\0'));
  absl::StatusOr<Tensor> t = TensorFromProto(p);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("needs 8 bytes of tensor_content, got 4"),
            std::string::npos)
      << t.status();
}

TEST(TensorFromProto, RefusesATensorLargerThan2GiB) {
  proto::TensorProto p;
  p.set_dtype(proto::DT_FLOAT);
  // One float more than 2 GiB: refused before anything is allocated.
  p.mutable_tensor_shape()->add_dim()->set_size((int64_t{1} << 29) + 1);
  p.add_float_val(0);
  absl::StatusOr<Tensor> t = TensorFromProto(p);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("larger than 2 GiB"), std::string::npos)
      << t.status();
}

TEST(DataTypeFromProto, NamesWhatItCannotHold) {
  EXPECT_EQ(DataTypeFromProto(proto::DT_FLOAT).value(), DT_FLOAT);
  EXPECT_EQ(DataTypeFromProto(0).status().message(), "dtype DT_INVALID");
  EXPECT_EQ(DataTypeFromProto(12345).status().message(),
            "bad dtype enum value 12345");
  EXPECT_NE(DataTypeFromProto(proto::DT_HALF)
                .status()
                .message()
                .find("is not supported"),
            std::string::npos);
}

TEST(ShapeFromProto, AllowsUnknownDimensionsOnlyWhenAsked) {
  proto::TensorShapeProto p;
  p.add_dim()->set_size(-1);
  p.add_dim()->set_size(3);
  EXPECT_EQ(ShapeFromProto(p, true).value(), TensorShape({-1, 3}));
  EXPECT_FALSE(ShapeFromProto(p, false).ok());
  proto::TensorShapeProto unknown_rank;
  unknown_rank.set_unknown_rank(true);
  EXPECT_FALSE(ShapeFromProto(unknown_rank, true).ok());
}

TEST(AttrFromProto, ConvertsEachKindItWasAsked) {
  proto::AttrValue i;
  i.set_i(4);
  EXPECT_EQ(std::get<int64_t>(AttrFromProto(i, "int").value()), 4);
  proto::AttrValue list;
  list.mutable_list()->add_f(0.5f);
  list.mutable_list()->add_f(2);
  EXPECT_EQ(
      std::get<std::vector<float>>(AttrFromProto(list, "list(float)").value()),
      (std::vector<float>{0.5f, 2}));
}

TEST(AttrFromProto, AnEmptyListIsAnyListType) {
  proto::AttrValue empty;
  empty.mutable_list();
  EXPECT_EQ(ProtoAttrKind(empty), "list");
  EXPECT_TRUE(
      std::get<std::vector<int64_t>>(AttrFromProto(empty, "list(int)").value())
          .empty());
}

TEST(AttrFromProto, RefusesAValueOfAnotherKind) {
  proto::AttrValue f;
  f.set_f(1);
  absl::StatusOr<AttrValue> v = AttrFromProto(f, "bool");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.status().message(), "must be a bool, got a float");
}

TEST(AttrToProto, WritesWhatAttrFromProtoReads) {
  for (const AttrValue& value :
       {AttrValue(int64_t{3}), AttrValue(true), AttrValue(DT_INT32),
        AttrValue(std::string("SAME")), AttrValue(TensorShape({-1, 2})),
        AttrValue(std::vector<int64_t>{1, 2}),
        AttrValue(std::vector<DataType>{DT_FLOAT})}) {
    const std::string type(AttrTypeName(value));
    proto::AttrValue p;
    AttrToProto(value, &p);
    proto::AttrValue again;
    AttrToProto(AttrFromProto(p, type).value(), &again);
    EXPECT_EQ(again.SerializeAsString(), p.SerializeAsString()) << type;
    EXPECT_EQ(ProtoAttrKind(p), type);
  }
}

}  // namespace
}  // namespace graphgc
