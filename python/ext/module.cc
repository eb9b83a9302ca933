// The _graphgc extension module: the C++ half of the graphgc package
// (python/src/graphgc), which gives it Keras's spelling.
#include "pybind11/pybind11.h"
#include "python/ext/bindings.h"

PYBIND11_MODULE(_graphgc, m) {
  m.doc() = "graphgc's C++ runtime; use the graphgc package instead.";
  graphgc::python::RegisterLayers(m);
  graphgc::python::RegisterCallbacks(m);
  graphgc::python::RegisterModels(m);
  graphgc::python::RegisterCollector(m);
  graphgc::python::RegisterBench(m);
}
