#include "util/cpu_count.h"

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "util/file.h"

namespace graphgc {
namespace {

// A quota file is one short line; anything longer is not the kernel's.
constexpr int64_t kMaxQuotaFileBytes = 64;

// quota / period cores, rounded up; nullopt unless both are positive.
std::optional<int> QuotaCores(int64_t quota, int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  const int64_t cores = quota / period + (quota % period != 0 ? 1 : 0);
  return static_cast<int>(std::min<int64_t>(cores, 1 << 20));
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  absl::StatusOr<std::string> contents =
      ReadRegularFile(path, kMaxQuotaFileBytes);
  if (!contents.ok()) return std::nullopt;
  return *std::move(contents);
}

int AffinityCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  // More CPUs than a cpu_set_t holds, or no affinity call: the hardware.
  return static_cast<int>(std::thread::hardware_concurrency());
}

std::optional<int> CgroupQuotaCores() {
  if (std::optional<std::string> v2 = ReadSmallFile("/sys/fs/cgroup/cpu.max")) {
    return cpu_count_internal::ParseCgroupV2CpuMax(*v2);
  }
  for (const char* dir : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
    const std::string base(dir);
    std::optional<std::string> quota =
        ReadSmallFile(base + "/cpu.cfs_quota_us");
    std::optional<std::string> period =
        ReadSmallFile(base + "/cpu.cfs_period_us");
    if (quota && period) {
      return cpu_count_internal::ParseCgroupV1Quota(*quota, *period);
    }
  }
  return std::nullopt;
}

}  // namespace

namespace cpu_count_internal {
namespace {

// Debian's Abseil has its own string_view.
absl::string_view Trimmed(std::string_view s) {
  return absl::StripAsciiWhitespace(absl::string_view(s.data(), s.size()));
}

}  // namespace

std::optional<int> ParseCgroupV2CpuMax(std::string_view contents) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(Trimmed(contents), ' ', absl::SkipEmpty());
  int64_t quota = 0, period = 0;
  if (fields.size() != 2 || fields[0] == "max" ||
      !absl::SimpleAtoi(fields[0], &quota) ||
      !absl::SimpleAtoi(fields[1], &period)) {
    return std::nullopt;
  }
  return QuotaCores(quota, period);
}

std::optional<int> ParseCgroupV1Quota(std::string_view quota,
                                      std::string_view period) {
  int64_t q = 0, p = 0;
  if (!absl::SimpleAtoi(Trimmed(quota), &q) ||
      !absl::SimpleAtoi(Trimmed(period), &p)) {
    return std::nullopt;
  }
  return QuotaCores(q, p);
}

int CombineCoreCounts(int affinity, std::optional<int> quota) {
  int cores = std::max(1, affinity);
  if (quota) cores = std::min(cores, *quota);
  return std::max(1, cores);
}

}  // namespace cpu_count_internal

int UsableCores() {
  return cpu_count_internal::CombineCoreCounts(AffinityCores(),
                                               CgroupQuotaCores());
}

}  // namespace graphgc
