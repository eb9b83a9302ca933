#include "util/cpu_count.h"

#include <sched.h>

#include <optional>

#include "gtest/gtest.h"

namespace graphgc {
namespace {

using cpu_count_internal::CombineCoreCounts;
using cpu_count_internal::ParseCgroupV1Quota;
using cpu_count_internal::ParseCgroupV2CpuMax;

TEST(ParseCgroupV2CpuMax, MaxIsNoLimit) {
  EXPECT_EQ(ParseCgroupV2CpuMax("max 100000\n"), std::nullopt);
}

TEST(ParseCgroupV2CpuMax, AFractionalQuotaRoundsUp) {
  EXPECT_EQ(ParseCgroupV2CpuMax("150000 100000\n"), 2);
}

TEST(ParseCgroupV2CpuMax, AWholeQuotaIsThatManyCores) {
  EXPECT_EQ(ParseCgroupV2CpuMax("300000 100000"), 3);
}

TEST(ParseCgroupV2CpuMax, LessThanOneCoreIsOne) {
  EXPECT_EQ(ParseCgroupV2CpuMax("10000 100000\n"), 1);
}

TEST(ParseCgroupV2CpuMax, GarbageIsNoLimit) {
  for (const char* bad : {"", "\n", "garbage", "150000", "150000 100000 7",
                          "-1 100000", "150000 0", "150000 max", "1.5 1",
                          "150000x 100000", "99999999999999999999999 1"}) {
    EXPECT_EQ(ParseCgroupV2CpuMax(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(ParseCgroupV1Quota, MinusOneIsNoLimit) {
  EXPECT_EQ(ParseCgroupV1Quota("-1\n", "100000\n"), std::nullopt);
}

TEST(ParseCgroupV1Quota, AFractionalQuotaRoundsUp) {
  EXPECT_EQ(ParseCgroupV1Quota("150000\n", "100000\n"), 2);
}

TEST(ParseCgroupV1Quota, GarbageIsNoLimit) {
  EXPECT_EQ(ParseCgroupV1Quota("lots", "100000"), std::nullopt);
  EXPECT_EQ(ParseCgroupV1Quota("150000", ""), std::nullopt);
  EXPECT_EQ(ParseCgroupV1Quota("150000", "0"), std::nullopt);
}

TEST(CombineCoreCounts, TheQuotaCapsTheAffinity) {
  EXPECT_EQ(CombineCoreCounts(8, 2), 2);
}

TEST(CombineCoreCounts, AQuotaAboveTheAffinityChangesNothing) {
  EXPECT_EQ(CombineCoreCounts(2, 16), 2);
}

TEST(CombineCoreCounts, NoQuotaIsTheAffinity) {
  EXPECT_EQ(CombineCoreCounts(6, std::nullopt), 6);
}

TEST(CombineCoreCounts, AnUnknownAffinityIsOneCore) {
  EXPECT_EQ(CombineCoreCounts(0, std::nullopt), 1);
  EXPECT_EQ(CombineCoreCounts(-1, 4), 1);
}

TEST(UsableCores, IsAtLeastOneAndAtMostTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const int cores = UsableCores();
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, CPU_COUNT(&set));
}

}  // namespace
}  // namespace graphgc
