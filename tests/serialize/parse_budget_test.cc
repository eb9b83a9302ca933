#include "serialize/parse_budget.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "serialize/event.pb.h"

namespace graphgc {
namespace {

// An Event with repeated messages, strings long and short, packed scalars
// and bytes. (No map field: SpaceUsedLong() of a map crashes under this
// TSan build's protobuf.)
proto::Event VariedEvent() {
  proto::Event e;
  e.set_step(3);
  for (int i = 0; i < 200; ++i) {
    proto::Summary::Value* v = e.mutable_summary()->add_value();
    v->set_tag("a_tag_longer_than_fifteen_characters_" + std::to_string(i));
    v->mutable_metadata()->mutable_plugin_data()->set_content("short");
    proto::TensorProto* t = v->mutable_tensor();
    t->set_tensor_content(std::string(64, 'v'));
    for (int k = 0; k < 10; ++k) t->add_int64_val(k);
    t->add_string_val("s");
  }
  return e;
}

TEST(ParseBudget, EstimateIsAtLeastWhatTheParsedMessageUses) {
  const std::string wire = VariedEvent().SerializeAsString();
  proto::Event parsed;
  uint64_t estimate = 0;
  ASSERT_TRUE(
      ParseWithinBudget(wire, uint64_t{1} << 30, &parsed, &estimate).ok());
  EXPECT_GE(estimate, parsed.SpaceUsedLong());
}

TEST(ParseBudget, PackedZerosAreChargedAsTheElementsTheyParseTo) {
  proto::Event packed;
  auto* t = packed.mutable_summary()->add_value()->mutable_tensor();
  for (int i = 0; i < 100000; ++i) t->add_int64_val(0);
  absl::StatusOr<uint64_t> bytes = EstimateParsedBytes(
      packed.SerializeAsString(), *proto::Event::descriptor());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_GE(*bytes, 100000u * sizeof(int64_t));
}

TEST(ParseBudget, OverTheBudgetIsResourceExhaustedAndParsesNothing) {
  proto::Event e;
  auto* t = e.mutable_summary()->add_value()->mutable_tensor();
  for (int i = 0; i < 10000; ++i) t->add_int64_val(0);
  proto::Event out;
  out.set_step(7);
  const absl::Status s =
      ParseWithinBudget(e.SerializeAsString(), /*budget=*/40000, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(
      absl::StrContains(s.message(),
                        "as graphgc.proto.Event needs more than the budget of "
                        "40000 bytes of memory"))
      << s;
  EXPECT_EQ(out.step(), 7);  // untouched
}

TEST(ParseBudget, ALengthPastTheEndIsInvalidArgumentNamingItsOffset) {
  // Event.summary (field 5) claiming 5 bytes where 2 follow.
  const std::string wire("\x2a\x05\x0a\x00", 4);
  const absl::StatusOr<uint64_t> bytes =
      EstimateParsedBytes(wire, *proto::Event::descriptor());
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bytes.status().message(), "byte offset 1"))
      << bytes.status();
}

TEST(ParseBudget, UnknownFieldsAreCharged) {
  // Field 15 (not in Event), length-delimited, 100 bytes.
  std::string wire("\x7a\x64", 2);
  wire += std::string(100, 'u');
  const absl::StatusOr<uint64_t> bytes =
      EstimateParsedBytes(wire, *proto::Event::descriptor());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  proto::Event parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_GE(*bytes, parsed.SpaceUsedLong());
  EXPECT_GT(*bytes, 100u);
}

}  // namespace
}  // namespace graphgc
