// tests/util/fifo.h
//
// Test helpers for "a FIFO must not stall us" specifications: MakeFifo()
// makes one, and CallUnlessItBlocks() runs a call that should refuse it, so
// that a regression makes the test fail instead of hang.
#ifndef GRAPHGC_TESTS_UTIL_FIFO_H_
#define GRAPHGC_TESTS_UTIL_FIFO_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace graphgc {

// Makes a FIFO at `path` (removing what was there); false on failure.
inline bool MakeFifo(const std::string& path) {
  ::unlink(path.c_str());
  return ::mkfifo(path.c_str(), 0600) == 0;
}

// Runs `call` on its own thread and returns its status. If `call` is still
// blocked after a minute (on the FIFO at `fifo`: an open for reading waits
// for a writer, one for writing waits for a reader), opens `fifo` read-write,
// which releases either, and returns std::nullopt. The minute is a guard
// against hanging, not a timing assertion: a correct `call` never waits.
inline std::optional<absl::Status> CallUnlessItBlocks(
    const std::string& fifo, std::function<absl::Status()> call) {
  std::future<absl::Status> result =
      std::async(std::launch::async, std::move(call));
  if (result.wait_for(std::chrono::minutes(1)) == std::future_status::ready) {
    return result.get();
  }
  const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  result.wait();
  if (fd >= 0) ::close(fd);
  return std::nullopt;
}

}  // namespace graphgc

#endif  // GRAPHGC_TESTS_UTIL_FIFO_H_
