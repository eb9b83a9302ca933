// python/ext/numpy_tensor.h
//
// NumPy arrays in and out of graphgc Tensors.
//
// In: an argument graphgc reads only while the call runs (fit, evaluate and
// predict data: ArrayUse::kDuringTheCall) is lent, not copied, when it is a
// C-contiguous array of the dtype the model takes (float32 features;
// float32, int32 or int64 targets) whose data is 64-byte aligned, as every
// array made under graphgc's NumPy allocator is (numpy_allocator.h): the
// Tensor reads the array's own memory (Tensor::Borrow) and holds a
// reference to the array until the last tensor on it goes. graphgc never
// writes a lent array; as with any NumPy array handed to code that runs
// without the GIL, writing it from another thread during the call is a
// data race. Weights (ArrayUse::kKept: set_weights) and unaligned arrays are
// copied into the Tensor's own buffer: one memcpy and no intermediate array.
// Any other layout (Fortran order, strided views) or numeric dtype is first
// converted by NumPy (np.ascontiguousarray with the target dtype, as Keras
// casts its inputs), and that new array is then lent or copied the same
// way; a dtype that is not a number (strings, objects, complex) is refused
// with ValueError naming the argument and the dtype.
//
// Out: the array views the Tensor's buffer without a copy and keeps the
// Tensor alive (a capsule is its base) when the Tensor holds the only
// reference to that buffer, so no one else sees writes through the
// (writable) array; otherwise its elements are copied.
//
// All functions need the GIL.
#ifndef GRAPHGC_PYTHON_EXT_NUMPY_TENSOR_H_
#define GRAPHGC_PYTHON_EXT_NUMPY_TENSOR_H_

#include <string>
#include <vector>

#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"
#include "runtime/tensor.h"

namespace graphgc::python {

// What an argument holds, which decides the dtype it is converted to.
enum class ArrayRole {
  // Model inputs and weights: always float32 (ints and bools converted).
  kFeatures,
  // Targets: float32, int32 or int64 kept; other integer and bool dtypes
  // become int64, other float dtypes float32.
  kTargets,
};

// How long graphgc reads what an argument holds.
enum class ArrayUse {
  // Only until the call returns (fit, evaluate, predict data): lent when
  // the layout allows.
  kDuringTheCall,
  // Beyond the call (weights a model keeps): always copied.
  kKept,
};

// The Tensor for `obj` (an ndarray or anything np.asarray takes); throws
// ValueError naming `what` for a non-numeric dtype or an unusable shape.
Tensor TensorFromArray(pybind11::handle obj, ArrayRole role, ArrayUse use,
                       const std::string& what);

// The array for `tensor` (moved in: see above for when it is not copied).
pybind11::array ArrayFromTensor(Tensor tensor);

// A list of arrays, one per tensor.
pybind11::list ArraysFromTensors(std::vector<Tensor> tensors);

}  // namespace graphgc::python

#endif  // GRAPHGC_PYTHON_EXT_NUMPY_TENSOR_H_
