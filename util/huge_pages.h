// util/huge_pages.h
//
// Memory for the big arrays a large graph keeps (its node slabs, its name
// tables) that the kernel may back with transparent huge pages: 2 MiB
// pages, where the kernel's setting allows them ("always", or "madvise",
// Debian's and Ubuntu's default, for memory advised MADV_HUGEPAGE).
//
// Why: a graph of a million nodes touches about 300 MB. In 4 KiB pages that
// is some 75,000 first-touch page faults, each a trip through the kernel,
// and on a paravirtualised VM a fault costs microseconds; a 2 MiB page's
// fault covers 512 small pages (gc_bench's BM_FirstTouch rows compare the
// two).
//
// The cost is memory: a huge page is resident whole once any byte of it is
// touched, so only arrays of at least kHugePagesFrom (half a huge page)
// get them, their length rounded up to whole huge pages: once such an
// array is full it holds at most 1 MiB more than 4 KiB pages would, and
// at most 2 MiB more while it fills. Half, not one: the free list after a
// sweep of 500,000 nodes is 2,000,000 bytes, just under 2 MiB, and
// faulted in 4 KiB at a time it would cost about 490 faults per
// collection.
//
// Postconditions:
//  1. AllocateLarge(bytes) returns `bytes` bytes aligned to
//     alignof(std::max_align_t), uninitialised. For bytes >=
//     kHugePagesFrom the block starts on a huge page, spans whole huge
//     pages, and is advised MADV_HUGEPAGE where the system supports it (a
//     hint: where it does not, the block is ordinary memory). It throws
//     std::bad_alloc when there is no memory, as operator new does, and
//     when rounding `bytes` up would overflow.
//  2. FreeLarge(p, bytes) frees a block AllocateLarge(bytes) returned.
//  3. AllocateLargeBlock(bytes) is AllocateLarge(bytes) owned: the
//     LargeBlock frees it (FreeLarge with the same bytes) when destroyed.
//  4. HugePageAllocator<T> is a standard allocator (interchangeable with
//     every other instance) whose allocations are AllocateLarge's: a
//     container of it grows as with std::allocator, and its arrays of at
//     least kHugePagesFrom get huge pages. allocate(n) throws
//     std::bad_array_new_length when n * sizeof(T) overflows.
//
// Thread-safe: the functions keep no state of their own.
#ifndef GRAPHGC_UTIL_HUGE_PAGES_H_
#define GRAPHGC_UTIL_HUGE_PAGES_H_

#include <cstddef>
#include <limits>
#include <memory>
#include <new>
#include <vector>

namespace graphgc {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kHugePagesFrom = kHugePageBytes / 2;

void* AllocateLarge(size_t bytes);
void FreeLarge(void* p, size_t bytes) noexcept;

// A block of AllocateLarge's that frees itself (postcondition 3).
struct FreeLargeBlock {
  size_t bytes = 0;
  void operator()(char* block) const noexcept { FreeLarge(block, bytes); }
};
using LargeBlock = std::unique_ptr<char[], FreeLargeBlock>;
inline LargeBlock AllocateLargeBlock(size_t bytes) {
  return LargeBlock(static_cast<char*>(AllocateLarge(bytes)),
                    FreeLargeBlock{bytes});
}

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;
  static_assert(alignof(T) <= alignof(std::max_align_t),
                "AllocateLarge aligns to std::max_align_t");

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT

  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) {
      throw std::bad_array_new_length();
    }
    return static_cast<T*>(AllocateLarge(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { FreeLarge(p, n * sizeof(T)); }

  template <typename U>
  friend bool operator==(const HugePageAllocator&,
                         const HugePageAllocator<U>&) {
    return true;
  }
};

// A vector whose array is in huge pages once it reaches kHugePagesFrom.
template <typename T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_HUGE_PAGES_H_
