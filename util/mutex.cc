#include "util/mutex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdint>

namespace graphgc {
namespace {

// Spins before sleeping: the graph's lock is held for a node's insertion,
// well under a microsecond, so a waiter usually gets it without a system
// call.
constexpr int kSpins = 100;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void Mutex::LockSlow() { Acquire(kWriter | kReaders, kWriter); }

void Mutex::ReaderLockSlow() { Acquire(kWriter, kReader); }

void Mutex::Acquire(uint32_t blocked_by, uint32_t add) {
  for (int spins = 0;;) {
    uint32_t now = state_.load(std::memory_order_relaxed);
    if ((now & blocked_by) == 0) {
      // Free for us: take it, leaving kWaiting for the unlock to act on.
      if (state_.compare_exchange_weak(now, now + add,
                                       std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return;
      }
      continue;
    }
    if (spins < kSpins) {
      ++spins;
      CpuRelax();
      continue;
    }
    if ((now & kWaiting) == 0 &&
        !state_.compare_exchange_weak(now, now | kWaiting,
                                      std::memory_order_relaxed,
                                      std::memory_order_relaxed)) {
      continue;  // the word changed: look again
    }
    Sleep(now | kWaiting);
  }
}

// The futex calls take the word's address and never write it. The wake
// comes after the release, so it may reach memory freed since (a waiter may
// destroy the Mutex as soon as it has it): the kernel then wakes nothing
// or, for reused memory, another futex's waiters spuriously, which every
// futex waiter tolerates.
void Mutex::WakeSleepers() {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAKE_PRIVATE,
          INT_MAX, nullptr, nullptr, 0);
}

void Mutex::Sleep(uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAIT_PRIVATE,
          expected, nullptr, nullptr, 0);
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the futex calls take the lock word's address");

}  // namespace graphgc
