// util/os_error.h
//
// A failed system call as an absl::Status that keeps its errno. The code is
// the one absl maps the errno to, the message "<what>: <strerror>", and the
// errno rides along as a payload, so a binding can raise the system's own
// error (Python: OSError(errno, message), which Python turns into
// NotADirectoryError, FileExistsError, ...) instead of guessing from the
// code, which FailedPrecondition or Internal share with non-file errors.
//
// A caller that adds context to such a status uses Annotate(), which keeps
// the payload; a hand-built absl::Status(s.code(), ...) would drop it.
//
// Thread safety: the functions are pure.
//
// Example:
//   if (::rename(from, to) != 0) return OsError(errno, "rename " + from);
//   ...
//   return Annotate(s, "ModelCheckpoint: saving epoch 3");
//   ...
//   if (int e = OsErrno(status); e != 0) { /* raise OSError(e, ...) */ }
#ifndef GRAPHGC_UTIL_OS_ERROR_H_
#define GRAPHGC_UTIL_OS_ERROR_H_

#include <string_view>

#include "absl/status/status.h"

namespace graphgc {

// OsError: the status for `errnum` (which must be non-zero) failing `what`:
// code absl::ErrnoToStatusCode(errnum), message "<what>: <strerror>", and
// `errnum` kept for OsErrno().
absl::Status OsError(int errnum, std::string_view what);

// OsErrno: the errno an OsError (or a status annotated from one) carries,
// or 0 for any other status, OK included.
int OsErrno(const absl::Status& status);

// Annotate: `status` with its message prefixed "<prefix>: ", its code and
// payloads kept. OK stays OK.
absl::Status Annotate(const absl::Status& status, std::string_view prefix);

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_OS_ERROR_H_
