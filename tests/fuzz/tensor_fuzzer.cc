// tests/fuzz/tensor_fuzzer.cc
//
// libFuzzer target for Tensor::FromData and TensorShape::Validate with
// arbitrary shapes. Input layout:
//   byte 0: bits 0-1 dtype (float, int32, int64, bool); bit 2: "fit" mode,
//           where the data gets exactly as many elements as a valid shape
//           (up to 1<<16) holds, so the success path is common; otherwise
//           the data is whatever the remaining bytes hold.
//   byte 1: rank (mod 9).
//   then per dimension one tag byte: < 0x40 a small size (tag & 0xf),
//           < 0x80 a special value (-1, 0, -2, INT64_MAX, INT64_MIN, 2^31,
//           2^32, 2^40, 2^62, ...), else the next 8 bytes little-endian.
//   rest: element bytes.
// Checked: FromData fails exactly when the shape is invalid or the count
// differs; on success dtype, shape, num_elements, TotalBytes and the data
// round-trip; Validate, num_elements and CheckedNumElements agree with an
// independent overflow-checked count.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/container/fixed_array.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/tensor.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using graphgc::Tensor;
using graphgc::TensorShape;

using graphgc::fuzz::Reader;

constexpr int64_t kSpecial[] = {
    -1,
    0,
    -2,
    std::numeric_limits<int64_t>::max(),
    std::numeric_limits<int64_t>::min(),
    int64_t{1} << 31,
    int64_t{1} << 32,
    (int64_t{1} << 32) + 1,
    int64_t{1} << 40,
    (int64_t{1} << 40) + 1,
    int64_t{1} << 62,
    (int64_t{1} << 20),
    (int64_t{1} << 21),
    65536,
    std::numeric_limits<int32_t>::max(),
    std::numeric_limits<int64_t>::max() / 2 + 1,
};

// The element count of `dims` if every dim is >= 0 and the count is at most
// 2^40 (TensorShape::Validate's limit), else -1.
int64_t CheckedCount(const std::vector<int64_t>& dims) {
  constexpr int64_t kMax = int64_t{1} << 40;
  bool zero = false;
  __int128 n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d > kMax) return -1;
    if (d == 0) zero = true;
    n *= d == 0 ? 1 : d;
    if (n > kMax) return -1;
  }
  return zero ? 0 : static_cast<int64_t>(n);
}

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "tensor_fuzzer: %s\n", what);
  std::abort();
}

template <typename T>
void Check(const std::vector<int64_t>& dims, bool fit, Reader& in) {
  const int64_t expected = CheckedCount(dims);
  // Not std::vector: std::vector<bool> has no data().
  absl::FixedArray<T> data((fit && expected >= 0 && expected <= (1 << 16))
                               ? static_cast<size_t>(expected)
                               : in.n / sizeof(T));
  // Fill from the remaining bytes (cyclically); bools must be 0 or 1.
  for (size_t i = 0; i < data.size(); ++i) {
    uint8_t bytes[sizeof(T)] = {};
    for (size_t b = 0; b < sizeof(T) && in.n > 0; ++b) {
      bytes[b] = in.p[(i * sizeof(T) + b) % in.n];
    }
    if constexpr (std::is_same_v<T, bool>) {
      data[i] = bytes[0] & 1;
    } else {
      std::memcpy(&data[i], bytes, sizeof(T));
    }
  }

  const TensorShape shape(absl::MakeConstSpan(dims));
  absl::StatusOr<Tensor> t =
      Tensor::FromData<T>(shape, absl::MakeConstSpan(data.data(), data.size()));
  const bool should_succeed =
      expected >= 0 && static_cast<int64_t>(data.size()) == expected;
  if (!t.ok()) {
    if (should_succeed && !absl::IsResourceExhausted(t.status())) {
      std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
      Die("FromData rejected a valid shape and matching data");
    }
    if (t.status().message().empty()) Die("error without a message");
    return;
  }
  if (!should_succeed) Die("FromData accepted an invalid shape or count");
  if (t->dtype() != graphgc::DataTypeToEnum<T>::value) Die("dtype");
  if (t->shape() != shape) Die("shape");
  if (t->num_elements() != expected) Die("num_elements");
  if (t->shape().num_elements() != expected) Die("shape num_elements");
  if (t->TotalBytes() != expected * static_cast<int64_t>(sizeof(T))) {
    Die("TotalBytes");
  }
  absl::Span<const T> out = t->template data<T>();
  if (out.size() != data.size()) Die("data size");
  if (!data.empty() &&
      std::memcmp(out.data(), data.data(), data.size() * sizeof(T)) != 0) {
    Die("data round trip");
  }
  absl::StatusOr<Tensor> flat = t->Reshaped(TensorShape({expected}));
  if (!flat.ok() || !flat->SharesBufferWith(*t)) Die("Reshaped");
  (void)t->DebugString();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  uint8_t mode = 0, rank = 0;
  if (!in.Byte(&mode) || !in.Byte(&rank)) return 0;
  rank %= 9;
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    uint8_t tag = 0;
    in.Byte(&tag);
    if (tag < 0x40) {
      dims.push_back(tag & 0xf);
    } else if (tag < 0x80) {
      dims.push_back(kSpecial[tag % (sizeof(kSpecial) / sizeof(kSpecial[0]))]);
    } else {
      dims.push_back(in.Int64());
    }
  }

  // Validate agrees with the independent count; with allow_unknown, -1 is
  // accepted where the rest is valid.
  const int64_t count = CheckedCount(dims);
  const bool valid = TensorShape::Validate(dims, false).ok();
  if (valid != (count >= 0)) Die("Validate(allow_unknown=false) disagrees");
  std::vector<int64_t> known;
  bool other_negative = false;
  for (int64_t d : dims) {
    if (d == -1) continue;
    if (d < 0) other_negative = true;
    known.push_back(d);
  }
  const bool valid_unknown = TensorShape::Validate(dims, true).ok();
  if (other_negative && valid_unknown) Die("Validate accepted a dim < -1");
  if (valid_unknown && CheckedCount(known) < 0) {
    Die("Validate(allow_unknown=true) accepted too many elements");
  }
  const TensorShape shape(dims);
  (void)shape.DebugString();
  // num_elements() is the exact count of a valid, fully defined shape and
  // -1 for any other (unknown or invalid: never a wrapped product).
  if (shape.num_elements() != count) Die("num_elements");
  if (shape.CheckedNumElements().ok() != (count >= 0)) {
    Die("CheckedNumElements disagrees");
  }

  const bool fit = (mode & 4) != 0;
  switch (mode & 3) {
    case 0:
      Check<float>(dims, fit, in);
      break;
    case 1:
      Check<int32_t>(dims, fit, in);
      break;
    case 2:
      Check<int64_t>(dims, fit, in);
      break;
    case 3:
      Check<bool>(dims, fit, in);
      break;
  }
  return 0;
}
