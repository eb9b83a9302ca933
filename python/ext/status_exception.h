// python/ext/status_exception.h
//
// ThrowStatus: how a non-OK absl::Status reaches Python. A failed system
// call (a status that carries its errno, util/os_error.h) becomes
// OSError(errno, message), which Python turns into the errno's own subclass
// (FileNotFoundError, NotADirectoryError, ...), in any call. Otherwise
// InvalidArgument becomes ValueError and Unimplemented NotImplementedError
// (a functional model of several inputs, its save); in a call that touches
// files (ErrorContext::kFit, a
// fit with its file-writing callbacks, and kFile) NotFound becomes
// FileNotFoundError, PermissionDenied PermissionError, AlreadyExists
// FileExistsError (all OSError), and DataLoss OSError; in a call that is
// a file operation (kFile: save, load_model, CSVLogger), FailedPrecondition
// too (a path that is not a directory, a directory holding other files);
// everything else is RuntimeError. ValueError and OSError carry the C++
// message (NotImplementedError too); RuntimeError carries the code too
// ("FAILED_PRECONDITION: ..."), since it stands for several codes. Must be
// called with the GIL held.
#ifndef GRAPHGC_PYTHON_EXT_STATUS_EXCEPTION_H_
#define GRAPHGC_PYTHON_EXT_STATUS_EXCEPTION_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graphgc::python {

enum class ErrorContext { kCompute, kFit, kFile };

// Throws the Python exception for `status`, which must not be OK.
[[noreturn]] void ThrowStatus(const absl::Status& status,
                              ErrorContext context = ErrorContext::kCompute);

// Returns the value of `result`, or throws its status as above.
template <typename T>
T ValueOrThrow(absl::StatusOr<T> result,
               ErrorContext context = ErrorContext::kCompute) {
  if (!result.ok()) ThrowStatus(result.status(), context);
  return *std::move(result);
}

inline void OkOrThrow(const absl::Status& status,
                      ErrorContext context = ErrorContext::kCompute) {
  if (!status.ok()) ThrowStatus(status, context);
}

}  // namespace graphgc::python

#endif  // GRAPHGC_PYTHON_EXT_STATUS_EXCEPTION_H_
