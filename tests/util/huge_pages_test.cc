#include "util/huge_pages.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace graphgc {
namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// The VmFlags line of the mapping in /proc/self/smaps that holds `p`, or
// "" if none does.
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    // A mapping's first line: "start-end perms offset dev inode path".
    const std::vector<std::string> range =
        absl::StrSplit(line.substr(0, line.find(' ')), '-');
    uint64_t start = 0, end = 0;
    if (range.size() == 2 && absl::SimpleHexAtoi(range[0], &start) &&
        absl::SimpleHexAtoi(range[1], &end) &&
        line.find(':') > range[0].size()) {
      inside = start <= Address(p) && Address(p) < end;
      continue;
    }
    if (inside && absl::StartsWith(line, "VmFlags:")) return line;
  }
  return "";
}

// Whether this kernel may give advised memory huge pages.
bool KernelAdvisesHugePages() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::stringstream text;
  text << f.rdbuf();
  return f.good() && !absl::StrContains(text.str(), "[never]");
}

TEST(AllocateLarge, ABlockSmallerThanHalfAHugePageIsOrdinaryWritableMemory) {
  for (size_t bytes : {size_t{1000}, kHugePagesFrom - 1}) {
    void* p = AllocateLarge(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(Address(p) % alignof(std::max_align_t), 0u);
    std::memset(p, 7, bytes);
    FreeLarge(p, bytes);
  }
}

TEST(AllocateLarge, ABlockOfHalfAHugePageOrMoreStartsOnAHugePage) {
  for (size_t bytes : {kHugePagesFrom, kHugePageBytes - 1, kHugePageBytes,
                       kHugePageBytes + 1, 3 * kHugePageBytes}) {
    char* p = static_cast<char*>(AllocateLarge(bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(Address(p) % kHugePageBytes, 0u) << bytes;
    std::memset(p, 1, bytes);
    EXPECT_EQ(p[bytes - 1], 1);
    FreeLarge(p, bytes);
  }
}

TEST(AllocateLarge, ABlockOfHalfAHugePageOrMoreIsAdvisedForHugePages) {
  if (!KernelAdvisesHugePages()) {
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  }
  const size_t bytes = kHugePagesFrom;
  void* p = AllocateLarge(bytes);
  // "hg": the mapping was advised MADV_HUGEPAGE (proc(5)).
  const std::string flags = VmFlagsOf(p);
  EXPECT_TRUE(absl::StrContains(flags, " hg")) << flags;
  FreeLarge(p, bytes);
}

TEST(AllocateLarge, ASizeThatCannotBeRoundedToHugePagesIsRefused) {
  EXPECT_THROW(AllocateLarge(std::numeric_limits<size_t>::max() - 10),
               std::bad_alloc);
}

TEST(HugePageAllocator, ACountWhoseBytesOverflowIsRefused) {
  HugePageAllocator<uint64_t> alloc;
  EXPECT_THROW(alloc.allocate(std::numeric_limits<size_t>::max() / 4),
               std::bad_array_new_length);
}

TEST(HugePageAllocator, AVectorGrowsAsWithTheStandardAllocator) {
  std::vector<uint32_t, HugePageAllocator<uint32_t>> v;
  for (uint32_t i = 0; i < 1000000; ++i) v.push_back(i);
  for (uint32_t i = 0; i < 1000000; i += 9973) ASSERT_EQ(v[i], i);
  // Past a huge page, its array starts on one.
  EXPECT_GE(v.capacity() * sizeof(uint32_t), kHugePageBytes);
  EXPECT_EQ(Address(v.data()) % kHugePageBytes, 0u);
}

TEST(HugePageAllocator, AHashSetGrowsAndShrinksWithIt) {
  absl::flat_hash_set<int64_t, absl::Hash<int64_t>, std::equal_to<int64_t>,
                      HugePageAllocator<int64_t>>
      set;
  for (int64_t i = 0; i < 500000; ++i) set.insert(i * 7);
  EXPECT_EQ(set.size(), 500000u);
  EXPECT_TRUE(set.contains(7 * 4999));
  EXPECT_FALSE(set.contains(3));
  absl::erase_if(set, [](int64_t x) { return x % 2 == 0; });
  EXPECT_EQ(set.size(), 250000u);
  set = {};
  EXPECT_TRUE(set.empty());
}

// Under AddressSanitizer a block freed the other way from how it was
// allocated (free() of operator new's, or the reverse) is reported.
TEST(HugePageAllocator, AllInstancesAreInterchangeable) {
  HugePageAllocator<int> a;
  HugePageAllocator<double> b;
  EXPECT_TRUE(a == b);
  for (size_t n : {size_t{10}, kHugePagesFrom / sizeof(int)}) {
    int* p = a.allocate(n);
    HugePageAllocator<int>(b).deallocate(p, n);
  }
}

TEST(LargeBlock, OwnsAnAllocateLargeBlockOfItsSize) {
  for (size_t bytes : {size_t{4096}, kHugePagesFrom, 3 * kHugePageBytes}) {
    LargeBlock block = AllocateLargeBlock(bytes);
    ASSERT_NE(block.get(), nullptr);
    EXPECT_EQ(block.get_deleter().bytes, bytes);
    if (bytes >= kHugePagesFrom) {
      EXPECT_EQ(Address(block.get()) % kHugePageBytes, 0u);
    }
    std::memset(block.get(), 3, bytes);
  }
}

}  // namespace
}  // namespace graphgc
