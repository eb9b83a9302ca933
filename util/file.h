// util/file.h
//
// The one place graphgc checks a path it is given, opens a file for
// reading, and writes a file or a directory so that a reader sees it whole
// or not at all. Every reader of the library (serialize/tfrecord.h and what
// is built on it) opens through OpenRegularFileForReading(), so none of them
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
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
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

// WriteNewFile: creates `path` (refusing one that exists), writes `bytes`
// and fsyncs it, or a status naming the path and the step ("create <path>",
// "write", "fsync", "close"). A failure may leave a partial file behind.
absl::Status WriteNewFile(const std::string& path, std::string_view bytes);

// SyncDir: fsyncs the directory `dir`, so that the entries created or
// renamed in it are durable. Best effort: an error is ignored.
void SyncDir(const std::string& dir);

// StagingPath: "<path>.graphgc-save-<pid>-<n>", a sibling of `path` that no
// other call in this process returns.
std::string StagingPath(const std::string& path);

// WriteFileAtomically: creates `path`'s parent directories, writes `bytes`
// to a new file beside `path` (WriteNewFile) and renames it over `path`, so
// a reader sees the old file or the new one, never a part. On failure the
// staged file is removed and `path` is as it was.
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view bytes);

// WriteDirectoryAtomically: `dir` (created, with its parents, if missing)
// holding exactly `files`, (name, bytes) pairs written in order into a new
// sibling directory that then replaces `dir`: a rename when `dir` does not
// exist, else an atomic exchange (Linux's renameat2 RENAME_EXCHANGE; where
// the file system lacks it, two renames, between which `dir` briefly does
// not exist, never half-written), after which the old contents are
// deleted. An existing `dir` is replaced only when `may_replace(dir)`
// (`dir` without a trailing '/'), called only then, is OK; its status is
// returned otherwise. A trailing '/' of
// `dir` is ignored; "/" is InvalidArgument "<what>: '/' cannot be
// replaced". On failure the staged directory is removed and `dir` is as it
// was.
absl::Status WriteDirectoryAtomically(
    const std::string& dir, std::string_view what,
    const std::vector<std::pair<std::string, std::string>>& files,
    absl::FunctionRef<absl::Status(const std::string& dir)> may_replace);

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_FILE_H_
