#include "python/ext/status_exception.h"

#include <Python.h>

#include <string>

#include "pybind11/pybind11.h"
#include "util/os_error.h"

namespace graphgc::python {

void ThrowStatus(const absl::Status& status, ErrorContext context) {
  std::string message(status.message());
  if (const int errnum = OsErrno(status); errnum != 0) {
    // OSError(errno, message): Python picks the subclass for the errno.
    PyObject* args = Py_BuildValue("(is)", errnum, message.c_str());
    if (args != nullptr) {
      PyErr_SetObject(PyExc_OSError, args);
      Py_DECREF(args);
      throw pybind11::error_already_set();
    }
    PyErr_Clear();  // out of memory building the tuple: fall back below
  }
  const bool files = context != ErrorContext::kCompute;
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      type = PyExc_ValueError;
      break;
    case absl::StatusCode::kUnimplemented:
      type = PyExc_NotImplementedError;
      break;
    case absl::StatusCode::kNotFound:
      if (files) type = PyExc_FileNotFoundError;
      break;
    case absl::StatusCode::kPermissionDenied:
      if (files) type = PyExc_PermissionError;
      break;
    case absl::StatusCode::kAlreadyExists:
      if (files) type = PyExc_FileExistsError;
      break;
    case absl::StatusCode::kDataLoss:
      if (files) type = PyExc_OSError;
      break;
    case absl::StatusCode::kFailedPrecondition:
      if (context == ErrorContext::kFile) type = PyExc_OSError;
      break;
    default:
      break;
  }
  if (type == PyExc_RuntimeError) message = status.ToString();
  PyErr_SetString(type, message.c_str());
  throw pybind11::error_already_set();
}

}  // namespace graphgc::python
