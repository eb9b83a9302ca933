#include "python/ext/status_exception.h"

#include <Python.h>

#include <string>

#include "pybind11/pybind11.h"

namespace graphgc::python {

void ThrowStatus(const absl::Status& status, ErrorContext context) {
  std::string message(status.message());
  const bool files = context != ErrorContext::kCompute;
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      type = PyExc_ValueError;
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
