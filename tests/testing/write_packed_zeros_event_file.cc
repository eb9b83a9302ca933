// write_packed_zeros_event_file PATH summary|graph ZERO_BYTES
//
// Writes an events file of one record that takes a few KiB on disk and
// expands about 8 times over when parsed (tests/testing/packed_zeros_events.h),
// for shell tests of the tools that read events files.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/testing/packed_zeros_events.h"

int main(int argc, char** argv) {
  if (argc != 4 || (std::strcmp(argv[2], "summary") != 0 &&
                    std::strcmp(argv[2], "graph") != 0)) {
    std::fprintf(stderr, "usage: %s PATH summary|graph ZERO_BYTES\n", argv[0]);
    return 2;
  }
  const graphgc::PackedZerosIn in = std::strcmp(argv[2], "summary") == 0
                                        ? graphgc::PackedZerosIn::kSummaryTensor
                                        : graphgc::PackedZerosIn::kGraphDefAttr;
  const absl::Status s = graphgc::WritePackedZerosEventFile(
      argv[1], {{.in = in, .zero_bytes = std::strtoull(argv[3], nullptr, 10)}});
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
