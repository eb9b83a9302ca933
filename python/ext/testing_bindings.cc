// Hooks for the pytest suites (tests/python), each named ..._for_testing:
// what the tensor made from an array reads, the aligned allocator's counts,
// and a lent array released by a thread Python never saw.
#include <cstdint>
#include <thread>
#include <utility>

#include "pybind11/pybind11.h"
#include "python/ext/bindings.h"
#include "python/ext/gil.h"
#include "python/ext/numpy_allocator.h"
#include "python/ext/numpy_tensor.h"
#include "runtime/tensor.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;

Tensor FeaturesTensor(py::handle x) {
  return TensorFromArray(x, ArrayRole::kFeatures, ArrayUse::kDuringTheCall,
                         "x");
}

}  // namespace

void RegisterTestingHooks(py::module_& m) {
  // Where the tensor made from `x` as fit's features reads its elements,
  // and whether it reads the array's own memory (lent, not copied).
  m.def("_features_tensor_for_testing", [](py::handle x) {
    Tensor t = FeaturesTensor(x);
    return py::make_tuple(reinterpret_cast<uintptr_t>(t.data<float>().data()),
                          t.IsBorrowed());
  });
  // (allocations, frees) of the graphgc_aligned64 allocator so far.
  m.def("_aligned_allocator_counts_for_testing", [] {
    AlignedAllocatorCounts counts = AlignedAllocatorCountsForTesting();
    return py::make_tuple(counts.allocations, counts.frees);
  });
  // Makes fit's features tensor from `x`, then drops it on a new C++
  // thread, which therefore releases a lent array without holding the GIL
  // beforehand (numpy_tensor.cc takes it there); returns whether it was
  // lent.
  m.def("_drop_lent_tensor_on_a_new_thread_for_testing", [](py::handle x) {
    Tensor t = FeaturesTensor(x);
    const bool lent = t.IsBorrowed();
    GilReleased nogil;
    std::thread([t = std::move(t)]() mutable {
      Tensor last = std::move(t);
    }).join();
    return lent;
  });
}

}  // namespace graphgc::python
