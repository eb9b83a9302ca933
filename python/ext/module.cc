// The _graphgc extension module: the C++ half of the graphgc package
// (python/src/graphgc), which gives it Keras's spelling.
#include <cstdint>

#include "pybind11/pybind11.h"
#include "python/ext/bindings.h"
#include "python/ext/numpy_allocator.h"
#include "python/ext/numpy_tensor.h"

PYBIND11_MODULE(_graphgc, m) {
  m.doc() = "graphgc's C++ runtime; use the graphgc package instead.";
  graphgc::python::RegisterLayers(m);
  graphgc::python::RegisterCallbacks(m);
  graphgc::python::RegisterModels(m);
  graphgc::python::RegisterCollector(m);
  graphgc::python::RegisterBench(m);
  // Arrays made from here on are 64-byte aligned, so fit, evaluate and
  // predict read them without a copy (numpy_tensor.h).
  graphgc::python::UseAlignedNumpyAllocator();
  m.def("_numpy_allocator_name", &graphgc::python::NumpyAllocatorName);
  // For tests: where the tensor made from `x` as fit's features reads its
  // elements, and whether it reads the array's own memory.
  m.def("_features_tensor_for_testing", [](pybind11::handle x) {
    graphgc::Tensor t = graphgc::python::TensorFromArray(
        x, graphgc::python::ArrayRole::kFeatures,
        graphgc::python::ArrayUse::kDuringTheCall, "x");
    return pybind11::make_tuple(
        reinterpret_cast<uintptr_t>(t.data<float>().data()), t.IsBorrowed());
  });
}
