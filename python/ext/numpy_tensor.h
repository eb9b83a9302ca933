// python/ext/numpy_tensor.h
//
// NumPy arrays in and out of graphgc Tensors.
//
// In: a C-contiguous float32, int32 or int64 array (the dtypes a model
// takes) is read straight from its buffer into the Tensor's own buffer: one
// memcpy and no intermediate array. A Tensor's buffer is immutable and
// training runs without the GIL, so the model cannot borrow the caller's
// array (which Python code could write meanwhile): that one copy is the
// least possible. Any other layout (Fortran order, strided views) or
// numeric dtype is first converted by NumPy (np.ascontiguousarray with the
// target dtype, as Keras casts its inputs); a dtype that is not a number
// (strings, objects, complex) is refused with ValueError naming the
// argument and the dtype.
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

// The Tensor for `obj` (an ndarray or anything np.asarray takes); throws
// ValueError naming `what` for a non-numeric dtype or an unusable shape.
Tensor TensorFromArray(pybind11::handle obj, ArrayRole role,
                       const std::string& what);

// The array for `tensor` (moved in: see above for when it is not copied).
pybind11::array ArrayFromTensor(Tensor tensor);

// A list of arrays, one per tensor.
pybind11::list ArraysFromTensors(std::vector<Tensor> tensors);

}  // namespace graphgc::python

#endif  // GRAPHGC_PYTHON_EXT_NUMPY_TENSOR_H_
