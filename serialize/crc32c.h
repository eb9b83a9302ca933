// serialize/crc32c.h
//
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) as TFRecord uses it,
// plus TFRecord's mask. Written by hand (table-driven, slicing-by-8) because
// Debian 12 packages no crc32c library and Abseil 20220623 predates
// absl/crc. Pure functions over their arguments: thread-safe.
//
// Why the mask: a CRC of data that itself holds CRCs is weak, so stored CRCs
// are rotated right by 15 bits and offset by a constant (kMaskDelta).
//
// Example:
//   uint32_t stored = crc32c::Mask(crc32c::Value(data));
//   bool ok = crc32c::Unmask(stored) == crc32c::Value(data);
#ifndef GRAPHGC_SERIALIZE_CRC32C_H_
#define GRAPHGC_SERIALIZE_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace graphgc::crc32c {

// Returns the CRC-32C of data[0, n) appended to a stream whose CRC so far is
// `crc` (0 for an empty stream): Extend(Value(a), b) == Value(a + b).
uint32_t Extend(uint32_t crc, const char* data, size_t n);

// CRC-32C of `data`.
inline uint32_t Value(std::string_view data) {
  return Extend(0, data.data(), data.size());
}

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;

// The masked form stored in TFRecord files.
inline constexpr uint32_t Mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

// Inverse of Mask(): Unmask(Mask(c)) == c for every c.
inline constexpr uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace graphgc::crc32c

#endif  // GRAPHGC_SERIALIZE_CRC32C_H_
