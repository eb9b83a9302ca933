#include "runtime/intra_op_threads.h"

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "util/cpu_count.h"

namespace graphgc {
namespace {

// 0: automatic. Read and written whole, so an atomic suffices.
std::atomic<int> set_threads{0};

int AutomaticThreads() {
  static const int cores = std::min(UsableCores(), kMaxIntraOpThreads);
  return cores;
}

}  // namespace

absl::Status SetIntraOpThreads(int n) {
  if (n < 0 || n > kMaxIntraOpThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("SetIntraOpThreads: ", n,
                     " threads; expected 0 (every "
                     "core this process may use) to ",
                     kMaxIntraOpThreads));
  }
  set_threads.store(n, std::memory_order_relaxed);
  return absl::OkStatus();
}

int IntraOpThreads() {
  const int n = set_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : AutomaticThreads();
}

int IntraOpThreadsSetting() {
  return set_threads.load(std::memory_order_relaxed);
}

int ResolveIntraOpThreads(int requested) {
  return requested > 0 ? std::min(requested, kMaxIntraOpThreads)
                       : IntraOpThreads();
}

}  // namespace graphgc
