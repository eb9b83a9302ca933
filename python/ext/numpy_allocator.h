// python/ext/numpy_allocator.h
//
// NumPy's data allocator (NEP 49, NumPy >= 1.22) set, for the importing
// thread's context, to one that aligns every array's data to 64 bytes: the
// alignment graphgc's Eigen views need, so the arrays a program makes after
// `import graphgc` can be lent to a fit, evaluate or predict without a copy
// (numpy_tensor.h). Arrays keep the allocator that made them and are freed
// by it, so arrays made before (or by threads with their own context) stay
// valid; they are merely copied when not aligned.
#ifndef GRAPHGC_PYTHON_EXT_NUMPY_ALLOCATOR_H_
#define GRAPHGC_PYTHON_EXT_NUMPY_ALLOCATOR_H_

#include "pybind11/pybind11.h"

namespace graphgc::python {

// Loads NumPy's C API and sets the 64-byte-aligned allocator for the
// calling context. Throws ImportError (pybind11::error_already_set) when
// NumPy cannot be loaded. Needs the GIL.
void UseAlignedNumpyAllocator();

// The name of the allocator NumPy uses for new arrays in the calling
// context (PyDataMem_GetHandler): "graphgc_aligned64" once the above ran.
std::string NumpyAllocatorName();

}  // namespace graphgc::python

#endif  // GRAPHGC_PYTHON_EXT_NUMPY_ALLOCATOR_H_
