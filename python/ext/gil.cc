#include "python/ext/gil.h"

#include <chrono>
#include <thread>

#include "util/mutex.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;

struct Gate {
  Mutex mu;
  CondVar idle;
  bool exiting ABSL_GUARDED_BY(mu) = false;
  // The thread that runs the exit (the importing thread until it starts).
  std::thread::id exit_thread ABSL_GUARDED_BY(mu);
  // Threads past the gate that have not yet let go of the GIL (PythonCall)
  // or taken it back (GilReleased).
  int inside ABSL_GUARDED_BY(mu) = 0;
};

Gate& TheGate() {
  static Gate* const gate = new Gate();  // outlives every thread
  return *gate;
}

// PythonCalls open on this thread.
thread_local int open_calls = 0;

// Counts this thread in, unless the interpreter is exiting and this thread
// is neither the exiting one, nor inside a PythonCall, nor holding the GIL
// already.
bool Enter() {
  Gate& g = TheGate();
  WriterLock lock(g.mu);
  const bool mine = std::this_thread::get_id() == g.exit_thread;
  if (open_calls == 0 && !mine && (g.exiting || _Py_IsFinalizing()) &&
      !PyGILState_Check()) {
    return false;
  }
  ++g.inside;
  return true;
}

void Leave() {
  Gate& g = TheGate();
  bool idle = false;
  {
    WriterLock lock(g.mu);
    idle = --g.inside == 0;
  }
  if (idle) g.idle.SignalAll();
}

void OnExit() {
  Gate& g = TheGate();
  {
    WriterLock lock(g.mu);
    g.exiting = true;
    g.exit_thread = std::this_thread::get_id();
  }
  py::gil_scoped_release nogil;
  WriterLock lock(g.mu);
  while (g.inside > 0) g.idle.Wait(g.mu);
}

}  // namespace

void InstallExitGate() {
  {
    Gate& g = TheGate();
    WriterLock lock(g.mu);
    g.exit_thread = std::this_thread::get_id();
  }
  py::module_::import("atexit").attr("register")(py::cpp_function(&OnExit));
}

PythonCall::PythonCall() {
  if (!Enter()) return;
  ++open_calls;
  gil_.emplace();
}

PythonCall::~PythonCall() {
  if (!gil_.has_value()) return;
  gil_.reset();
  --open_calls;
  Leave();
}

GilReleased::GilReleased() : state_(PyEval_SaveThread()) {}

GilReleased::~GilReleased() {
  if (!Enter()) {
    // Taking the GIL now would end this thread inside C++; the process is
    // about to end it anyway.
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  PyEval_RestoreThread(state_);
  Leave();
}

}  // namespace graphgc::python
