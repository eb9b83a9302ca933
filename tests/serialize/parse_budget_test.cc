#include "serialize/parse_budget.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "serialize/event.pb.h"
#include "serialize/graph.pb.h"

namespace graphgc {
namespace {

// A GraphDef with every kind of field the walk charges: repeated messages,
// strings long and short, map entries, packed and unpacked-able scalars.
proto::GraphDef VariedGraph() {
  proto::GraphDef g;
  for (int i = 0; i < 200; ++i) {
    proto::NodeDef* n = g.add_node();
    n->set_name("a_node_name_longer_than_fifteen_" + std::to_string(i));
    n->set_op("Const");
    n->add_input("x");
    auto& attrs = *n->mutable_attr();
    attrs["value"].mutable_tensor()->set_tensor_content(std::string(64, 'v'));
    for (int k = 0; k < 10; ++k) attrs["list"].mutable_list()->add_i(k);
    attrs["s"].set_s("short");
  }
  g.mutable_versions()->set_producer(1087);
  return g;
}

TEST(ParseBudget, EstimateIsAtLeastWhatTheParsedMessageUses) {
  const std::string wire = VariedGraph().SerializeAsString();
  proto::GraphDef parsed;
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
