// tests/testing/packed_zeros_events.h
//
// Events files that take a few KiB on disk and expand many times over when
// parsed: each record's Event holds a packed repeated int64 field of zero
// bytes, each byte a varint 0 that parses to an 8-byte element. The zeros
// are a hole of a sparse file, so even a record of 1 GiB takes no disk; the
// records' CRCs are valid, so only a parse budget stops a reader.
//
// Example:
//   ASSERT_TRUE(WritePackedZerosEventFile(
//       path, {{.in = PackedZerosIn::kSummaryTensor, .zero_bytes = 1 << 28}})
//                   .ok());
#ifndef GRAPHGC_TESTS_TESTING_PACKED_ZEROS_EVENTS_H_
#define GRAPHGC_TESTS_TESTING_PACKED_ZEROS_EVENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace graphgc {

enum class PackedZerosIn {
  // Event.summary.value[0].tensor.int64_val: the Event itself expands.
  kSummaryTensor,
  // Event.graph_def, a GraphDef whose one node "a" (Const) has an attr "x"
  // of list(int) holding the zeros: the Event holds the GraphDef's bytes as
  // they are; the GraphDef expands when parsed from them.
  kGraphDefAttr,
};

struct PackedZerosRecord {
  PackedZerosIn in = PackedZerosIn::kSummaryTensor;
  uint64_t zero_bytes = 0;
};

// Writes `records`, one TFRecord each, as the file `path` (truncated first).
absl::Status WritePackedZerosEventFile(
    const std::string& path, const std::vector<PackedZerosRecord>& records);

}  // namespace graphgc

#endif  // GRAPHGC_TESTS_TESTING_PACKED_ZEROS_EVENTS_H_
