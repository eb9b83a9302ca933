// util/cpu_count.h
//
// The number of cores this process may use, as TensorFlow and PyTorch
// count them for their default intra-op threads: the CPUs of the
// process's affinity mask (sched_getaffinity), capped by the cgroup's CPU
// quota (v2 /sys/fs/cgroup/cpu.max, v1 cpu.cfs_quota_us over
// cpu.cfs_period_us) rounded up, and at least 1. A quota file that is
// absent, not a regular file, larger than a line, or not the kernel's
// format is ignored: the affinity count stands.
//
// Thread safety: the functions are thread-safe.
//
// Example:
//   int threads = UsableCores();  // 2 in a 2-CPU container with quota 1.5
#ifndef GRAPHGC_UTIL_CPU_COUNT_H_
#define GRAPHGC_UTIL_CPU_COUNT_H_

#include <optional>
#include <string_view>

namespace graphgc {

// The cores this process may use, read from the system on every call
// (callers cache it).
int UsableCores();

// The pieces UsableCores combines, exposed for tests.
namespace cpu_count_internal {

// The quota a cgroup v2 cpu.max line allows, in cores rounded up:
// "150000 100000" is 2, "max 100000" (no limit) is nullopt, and so is
// anything that is not "<quota|max> <period>" with positive integers.
std::optional<int> ParseCgroupV2CpuMax(std::string_view contents);

// The same for cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us
// contents: a quota of -1 is no limit (nullopt), as is anything malformed.
std::optional<int> ParseCgroupV1Quota(std::string_view quota,
                                      std::string_view period);

// min(affinity, quota) and at least 1; an affinity below 1 (unknown)
// counts as 1.
int CombineCoreCounts(int affinity, std::optional<int> quota);

}  // namespace cpu_count_internal
}  // namespace graphgc

#endif  // GRAPHGC_UTIL_CPU_COUNT_H_
