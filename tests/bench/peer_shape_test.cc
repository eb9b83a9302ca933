#include "bench/peer_shape.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace graphgc::bench {
namespace {

TEST(PeerNodeName, NamesTheModelScopeAndTheNode) {
  char buffer[kPeerNameCapacity];
  EXPECT_EQ(PeerNodeName(12, 7, buffer), "model_12/dense/MatMul_7");
  EXPECT_EQ(std::string(buffer), "model_12/dense/MatMul_7");
}

TEST(PeerNodeName, FitsTheLargestIndices) {
  char buffer[kPeerNameCapacity];
  const std::string_view name = PeerNodeName(INT64_MIN, INT64_MAX, buffer);
  EXPECT_EQ(name,
            "model_-9223372036854775808/dense/MatMul_9223372036854775807");
}

TEST(PeerNodeName, EveryNodeOfAGraphHasItsOwnName) {
  std::set<std::string> names;
  char buffer[kPeerNameCapacity];
  for (int64_t m = 0; m < 20; ++m) {
    for (int64_t j = 0; j < kNodesPerModel; ++j) {
      names.insert(std::string(PeerNodeName(m, j, buffer)));
    }
  }
  EXPECT_EQ(names.size(), 20 * kNodesPerModel);
}

TEST(PeerModelDropped, DropsExactlyThePercentOfEveryHundredModels) {
  for (const int64_t pct : {0, 1, 33, 50, 100}) {
    for (int64_t start : {0, 100, 9900}) {
      int64_t dropped = 0;
      for (int64_t m = start; m < start + 100; ++m) {
        dropped += PeerModelDropped(m, pct) ? 1 : 0;
      }
      EXPECT_EQ(dropped, pct) << pct << "% from model " << start;
    }
  }
}

TEST(PeerModelDropped, SpreadsHalfOverAlternateModels) {
  for (int64_t m = 0; m < 10; ++m)
    EXPECT_EQ(PeerModelDropped(m, 50), m % 2 == 1);
}

}  // namespace
}  // namespace graphgc::bench
