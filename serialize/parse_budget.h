// serialize/parse_budget.h
//
// Parsing a protobuf from untrusted bytes inside a memory budget.
//
// A message's wire size does not bound what it parses to: a packed int64
// field of zero bytes becomes 8 bytes of memory per wire byte (plus the
// repeated field's growth), an empty sub-message takes 2 wire bytes and a
// heap object of its full size, an unknown field a vector slot. So a record
// of 1 GiB can parse to tens of GiB. EstimateParsedBytes walks the wire
// format against the message's descriptor, allocating nothing of the
// message, and returns an upper bound of the heap memory a parse of those
// bytes holds at any moment (its objects, repeated fields with their growth
// slack and the copy a growth step makes, strings, maps, unknown fields, and
// malloc's per-block overhead), so a caller compares it with a budget
// BEFORE parsing. ParseWithinBudget does both.
//
// The bound is an upper bound of protobuf 3.21's parser on 64-bit glibc:
// a parsed message's SpaceUsedLong() never exceeds it (tests/fuzz checks
// that on every input it parses). The walk is linear in the bytes and stops
// as soon as the estimate passes the budget.
//
// Thread safety: free functions over their arguments; thread-safe.
//
// Example:
//   proto::Event event;
//   GG_RETURN_IF_ERROR(ParseWithinBudget(bytes, /*budget=*/1 << 30, &event));
#ifndef GRAPHGC_SERIALIZE_PARSE_BUDGET_H_
#define GRAPHGC_SERIALIZE_PARSE_BUDGET_H_

#include <cstdint>
#include <limits>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace graphgc {

// An upper bound of the heap bytes that parsing `wire` as a `type` message
// takes, the message object itself included. The walk stops once the bound
// exceeds `stop_above`, returning a value over it. InvalidArgument ("byte
// offset N: ...") when `wire` is not a well-formed message of `type` as far
// as the walk went: a truncated varint or length, a wire type of 6 or 7,
// field number 0, an unmatched group, nesting over 100 levels.
absl::StatusOr<uint64_t> EstimateParsedBytes(
    std::string_view wire, const google::protobuf::Descriptor& type,
    uint64_t stop_above = std::numeric_limits<uint64_t>::max());

// Parses `wire` into `out` (cleared first) if EstimateParsedBytes is at
// most `budget`; otherwise parses nothing and returns ResourceExhausted
// "parsing N bytes as <type> needs more than the budget of B bytes of
// memory". InvalidArgument if the bytes are not a valid message (out is then
// unspecified). Never throws: a std::bad_alloc of the parse itself is
// ResourceExhausted too. Callers prefix what the bytes are (file, record).
// When `estimate` is not null it receives the estimate of a parsed message.
absl::Status ParseWithinBudget(std::string_view wire, uint64_t budget,
                               google::protobuf::Message* out,
                               uint64_t* estimate = nullptr);

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_PARSE_BUDGET_H_
