// python/ext/gil.h
//
// Taking the GIL from C++ without ever doing so during interpreter exit.
//
// CPython 3.11 ends a thread that takes the GIL once finalization has
// started (PyEval_RestoreThread calls pthread_exit): on one of our threads
// that unwinds through C++ frames (a destructor, a fit holding the model)
// and aborts the process. So every place that takes the GIL from C++ goes
// through one gate:
//  - PythonCall, for C++ that runs Python code on a thread the interpreter
//    is not waiting for (a Python callback's hook on a fit's thread,
//    dropping a Python reference from any thread): refused once the
//    interpreter is exiting (entered() false, nothing taken), so the caller
//    skips the Python part (a hook stops the fit, a reference is left).
//  - GilReleased, for a binding's C++ work: releases the GIL like
//    py::gil_scoped_release; on destruction it takes the GIL back unless the
//    interpreter is exiting, in which case the thread (a daemon thread,
//    whose C++ call has returned and holds no lock of ours) waits there
//    until the process ends.
// An atexit hook (InstallExitGate) marks the interpreter as exiting before
// finalization starts, then waits, without the GIL, until every thread
// already past the gate has taken and released it. Finalization therefore
// starts with no thread of ours about to take the GIL. A thread inside a
// PythonCall keeps its own nested calls open (a callback calling a
// binding), and the thread running the exit (the main thread) is never
// refused.
#ifndef GRAPHGC_PYTHON_EXT_GIL_H_
#define GRAPHGC_PYTHON_EXT_GIL_H_

#include <optional>

#include "pybind11/pybind11.h"

namespace graphgc::python {

// Registers the exit hook with Python's atexit (module init, with the GIL).
void InstallExitGate();

// Holds the GIL from construction to destruction, unless the interpreter
// is exiting (entered() is false and nothing is held). Needs no GIL.
class PythonCall {
 public:
  PythonCall();
  ~PythonCall();
  PythonCall(const PythonCall&) = delete;
  PythonCall& operator=(const PythonCall&) = delete;

  bool entered() const { return gil_.has_value(); }

 private:
  std::optional<pybind11::gil_scoped_acquire> gil_;
};

// Releases the GIL from construction to destruction (needs it); see above
// for the destruction during exit.
class GilReleased {
 public:
  GilReleased();
  ~GilReleased();
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  PyThreadState* state_;
};

// `call()` with the GIL released (see GilReleased); its result must hold no
// Python object: make those from it once the GIL is back.
template <typename Call>
auto WithoutGil(Call&& call) {
  GilReleased nogil;
  return call();
}

}  // namespace graphgc::python

#endif  // GRAPHGC_PYTHON_EXT_GIL_H_
