#include "serialize/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace graphgc::crc32c {
namespace {

// Test vectors from RFC 3720, appendix B.4, and the usual check value.
TEST(Crc32c, ThirtyTwoZeroBytes) {
  EXPECT_EQ(Value(std::string(32, '\0')), 0x8A9136AAu);
}

TEST(Crc32c, ThirtyTwoFFBytes) {
  EXPECT_EQ(Value(std::string(32, '\xFF')), 0x62A8AB43u);
}

TEST(Crc32c, AscendingBytes) {
  std::string s(32, '\0');
  for (int i = 0; i < 32; ++i) s[i] = static_cast<char>(i);
  EXPECT_EQ(Value(s), 0x46DD794Eu);
}

TEST(Crc32c, DescendingBytes) {
  std::string s(32, '\0');
  for (int i = 0; i < 32; ++i) s[i] = static_cast<char>(31 - i);
  EXPECT_EQ(Value(s), 0x113FDB5Cu);
}

TEST(Crc32c, CheckString) { EXPECT_EQ(Value("123456789"), 0xE3069283u); }

TEST(Crc32c, EmptyIsZero) { EXPECT_EQ(Value(""), 0u); }

// Slicing-by-8 and the byte loop must agree at every split and alignment.
TEST(Crc32c, ExtendEqualsWholeValueAtEverySplit) {
  std::string s;
  for (int i = 0; i < 100; ++i) s.push_back(static_cast<char>(i * 37 + 11));
  const uint32_t whole = Value(s);
  for (size_t split = 0; split <= s.size(); ++split) {
    EXPECT_EQ(
        Extend(Value(s.substr(0, split)), s.data() + split, s.size() - split),
        whole)
        << "split " << split;
  }
}

TEST(Crc32c, MaskRoundTrips) {
  for (uint32_t c : {0u, 1u, 0x8A9136AAu, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u,
                     0x12345678u}) {
    EXPECT_EQ(Unmask(Mask(c)), c);
  }
}

TEST(Crc32c, MaskChangesTheValue) {
  const uint32_t c = Value("foo");
  EXPECT_NE(Mask(c), c);
  EXPECT_NE(Mask(Mask(c)), Mask(c));
}

TEST(Crc32c, MaskMatchesTheFormula) {
  const uint32_t c = 0xE3069283u;
  EXPECT_EQ(Mask(c), ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

}  // namespace
}  // namespace graphgc::crc32c
