// tests/fuzz/fuzz_util.h
//
// Helpers the libFuzzer targets of tests/fuzz/ share: a reader that takes
// bytes and little-endian int64s off the front of an input, and the
// protobuf log silencer for targets that parse protos.
#ifndef GRAPHGC_TESTS_FUZZ_FUZZ_UTIL_H_
#define GRAPHGC_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>

#include "google/protobuf/stubs/logging.h"

namespace graphgc::fuzz {

// Reads an input front to back; reads past the end give zeros (Byte(out)
// says false instead), so every input decodes to something.
struct Reader {
  const uint8_t* p;
  size_t n;
  bool Byte(uint8_t* out) {
    if (n == 0) return false;
    *out = *p++;
    --n;
    return true;
  }
  uint8_t Byte() {
    uint8_t b = 0;
    Byte(&b);
    return b;
  }
  int64_t Int64() {
    uint64_t v = 0;
    for (int i = 0; i < 8 && n > 0; ++i, ++p, --n) {
      v |= static_cast<uint64_t>(*p) << (8 * i);
    }
    return static_cast<int64_t>(v);
  }
};

// Protobuf logs every malformed UTF-8 string it parses; call this from
// LLVMFuzzerInitialize so the fuzzer's output stays readable (and fast).
inline void SilenceProtobufLogs() { google::protobuf::SetLogHandler(nullptr); }

}  // namespace graphgc::fuzz

#endif  // GRAPHGC_TESTS_FUZZ_FUZZ_UTIL_H_
