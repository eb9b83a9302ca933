#include "util/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>
#include <limits>
#include <new>

namespace graphgc {
namespace {

// `bytes` rounded up to whole huge pages; 0 when that overflows.
size_t RoundUpToHugePages(size_t bytes) {
  const size_t pages = bytes / kHugePageBytes + (bytes % kHugePageBytes != 0);
  if (pages > std::numeric_limits<size_t>::max() / kHugePageBytes) return 0;
  return pages * kHugePageBytes;
}

}  // namespace

void* AllocateLarge(size_t bytes) {
  if (bytes < kHugePagesFrom) return ::operator new(bytes);
  const size_t rounded = RoundUpToHugePages(bytes);
  if (rounded == 0) throw std::bad_alloc();
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // A hint: EINVAL where the kernel has no transparent huge pages, and the
  // block is then ordinary memory.
  (void)::madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void FreeLarge(void* p, size_t bytes) noexcept {
  if (bytes < kHugePagesFrom) {
    ::operator delete(p);
  } else {
    std::free(p);
  }
}

}  // namespace graphgc
