// python/ext/numpy_allocator.h
//
// NumPy's data allocator (NEP 49, NumPy >= 1.22) for a context: NumPy's
// own, or "graphgc_aligned64", which aligns every array's data to 64 bytes:
// the alignment graphgc's Eigen views need, so arrays made under it can be
// lent to a fit, evaluate or predict without a copy (numpy_tensor.h).
// NumPy's choice is a context variable: it holds for the context that set
// it (by default the thread: a new thread starts with NumPy's own). Arrays
// keep the allocator that made them and are freed by it, so switching
// never invalidates an array; unaligned ones are merely copied.
//
// Every function needs the GIL; the allocator itself is thread-safe.
#ifndef GRAPHGC_PYTHON_EXT_NUMPY_ALLOCATOR_H_
#define GRAPHGC_PYTHON_EXT_NUMPY_ALLOCATOR_H_

#include <cstdint>
#include <string>

#include "pybind11/pybind11.h"

namespace graphgc::python {

// Loads NumPy's C API. Throws ImportError (pybind11::error_already_set)
// when NumPy cannot be loaded. Call once, before the functions below.
void LoadNumpyApi();

// Makes the aligned allocator the calling context's (enabled) or puts back
// the handler it replaced there, the very capsule PyDataMem_SetHandler
// returned (!enabled). Returns whether the aligned allocator was the
// context's before the call; asking for the state already in place
// changes nothing. Disabling when another handler was set over ours leaves
// that handler alone.
bool UseAlignedNumpyAllocator(bool enabled);

// The name of the allocator NumPy uses for new arrays in the calling
// context (PyDataMem_GetHandler): "graphgc_aligned64" or, for NumPy's own,
// "default_allocator".
std::string NumpyAllocatorName();

// What the aligned allocator did since the process started, counted in
// every context: blocks handed out (malloc, calloc) and freed.
struct AlignedAllocatorCounts {
  int64_t allocations = 0;
  int64_t frees = 0;
};
AlignedAllocatorCounts AlignedAllocatorCountsForTesting();

}  // namespace graphgc::python

#endif  // GRAPHGC_PYTHON_EXT_NUMPY_ALLOCATOR_H_
