// util/file.h
//
// The one place graphgc checks a path it is given and opens a file for
// reading. Every reader of the library (serialize/tfrecord.h and what is
// built on it) opens through OpenRegularFileForReading(), so none of them
// can be stalled by a FIFO or handed a directory or a device; every path a
// writer takes goes through CheckPath() first.
//
// Thread safety: the functions are thread-safe; a ScopedFd is not (one owner).
//
// Example:
//   GG_RETURN_IF_ERROR(CheckPath(log_dir, "TensorBoard log_dir"));
//   GG_ASSIGN_OR_RETURN(ScopedFd fd, OpenRegularFileForReading(path));
//   ::pread(fd.get(), buf, n, offset);
#ifndef GRAPHGC_UTIL_FILE_H_
#define GRAPHGC_UTIL_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graphgc {

// CheckPath: OK, or InvalidArgument naming `what` and the path if `path` is
// empty or holds a NUL byte (the C library would stop at the NUL and act on
// another path than the caller's).
absl::Status CheckPath(std::string_view path, std::string_view what);

// FileError: a std::filesystem error as a status, its code mapped from the
// errno `ec` carries, its message "<what>: <ec.message()>", the errno kept
// for OsErrno() (util/os_error.h).
absl::Status FileError(const std::error_code& ec, std::string_view what);

// ScopedFd: owns a file descriptor and closes it on destruction. Move-only.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd();
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  // The descriptor, or -1 if none.
  int get() const { return fd_; }
  // Gives up ownership: returns the descriptor and leaves -1.
  int release();

 private:
  int fd_ = -1;
};

// OpenRegularFileForReading: opens `path` read-only and returns it, or a
// status naming the path:
//   - InvalidArgument if the path is empty or holds a NUL (CheckPath), or
//     names anything but a regular file: "open <path>: is a directory", or
//     "open <path>: not a regular file (a FIFO)" (a socket, a device, ...).
//   - the open(2) error otherwise (NotFound, PermissionDenied, ...).
// The open is non-blocking, so a FIFO without a writer is refused at once
// instead of stalling the caller; on the regular file returned, O_NONBLOCK
// changes nothing. Symbolic links are followed.
absl::StatusOr<ScopedFd> OpenRegularFileForReading(const std::string& path);

// ReadRegularFile: the whole contents of `path`, opened with
// OpenRegularFileForReading (so only a regular file is read), or a status
// naming the path: its errors, or ResourceExhausted "<path>: <n> bytes, more
// than the <max_bytes> allowed" before anything is allocated when the file
// is larger than `max_bytes` (a file that grows while read is cut there and
// refused the same way), or the read(2) error.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            int64_t max_bytes);

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_FILE_H_
