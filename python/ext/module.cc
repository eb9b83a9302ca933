// The _graphgc extension module: the C++ half of the graphgc package
// (python/src/graphgc), which gives it Keras's spelling.
#include "pybind11/pybind11.h"
#include "python/ext/bindings.h"
#include "python/ext/gil.h"
#include "python/ext/numpy_allocator.h"

PYBIND11_MODULE(_graphgc, m) {
  m.doc() = "graphgc's C++ runtime; use the graphgc package instead.";
  graphgc::python::LoadNumpyApi();
  graphgc::python::InstallExitGate();
  graphgc::python::RegisterLayers(m);
  graphgc::python::RegisterOptimizers(m);
  graphgc::python::RegisterCallbacks(m);
  graphgc::python::RegisterFunctional(m);
  graphgc::python::RegisterModels(m);
  graphgc::python::RegisterSaving(m);
  graphgc::python::RegisterCollector(m);
  graphgc::python::RegisterBench(m);
  graphgc::python::RegisterConfig(m);
  graphgc::python::RegisterTestingHooks(m);
  // NumPy's allocator for the calling context (numpy_allocator.h); the
  // package's import chooses it (graphgc/numpy_allocator.py).
  m.def("_use_aligned_numpy_allocator",
        &graphgc::python::UseAlignedNumpyAllocator, pybind11::arg("enabled"));
  m.def("_numpy_allocator_name", &graphgc::python::NumpyAllocatorName);
}
