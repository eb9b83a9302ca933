// tests/fuzz/fuzz_util.h
//
// Helpers the libFuzzer targets of tests/fuzz/ share: a reader that takes
// bytes and little-endian int64s off the front of an input, the protobuf
// log silencer for targets that parse protos, a check that reads every
// byte of a fetched tensor, and the model keras_weights_fuzzer decodes.
#ifndef GRAPHGC_TESTS_FUZZ_FUZZ_UTIL_H_
#define GRAPHGC_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "google/protobuf/stubs/logging.h"
#include "runtime/tensor.h"
#include "serialize/keras_weights.h"

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

// Checks that `t`'s element count agrees with its shape, then reads every
// byte of its buffer, so a buffer shorter than its count (a wrapped size)
// is a sanitizer report. Returns what is wrong, or null.
inline const char* ReadEveryByte(const graphgc::Tensor& t) {
  if (t.num_elements() != t.shape().num_elements()) {
    return "an output's element count disagrees with its shape";
  }
  auto sum = [](auto span) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(span.data());
    volatile unsigned total = 0;
    for (size_t i = 0; i < span.size() * sizeof(span[0]); ++i) {
      total = total + bytes[i];
    }
  };
  switch (t.dtype()) {
    case graphgc::DT_FLOAT:
      sum(t.data<float>());
      return nullptr;
    case graphgc::DT_INT32:
      sum(t.data<int32_t>());
      return nullptr;
    case graphgc::DT_INT64:
      sum(t.data<int64_t>());
      return nullptr;
    case graphgc::DT_BOOL:
      sum(t.data<bool>());
      return nullptr;
    default:
      return "an output of an unexpected dtype";
  }
}

// The weights keras_weights_fuzzer.cc decodes and make_seed_corpus.cc
// writes: two Dense layers around a Flatten, as LoadModel names them.
inline std::vector<graphgc::LayerWeightsSpec> KerasWeightsFuzzSpecs() {
  return {{.path = "layers/dense", .shapes = {{3, 2}, {2}}},
          {.path = "layers/flatten", .shapes = {}},
          {.path = "layers/dense_1", .shapes = {{2, 1}}}};
}

}  // namespace graphgc::fuzz

#endif  // GRAPHGC_TESTS_FUZZ_FUZZ_UTIL_H_
