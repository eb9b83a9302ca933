#include "python/ext/numpy_allocator.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

// NumPy's C API, for this file alone (no other file uses it, so its table
// stays static here).
#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#include "numpy/arrayobject.h"

namespace graphgc::python {
namespace {

constexpr size_t kAlignment = 64;

// std::aligned_alloc wants a size that is a multiple of the alignment (and
// not zero); nullptr, as malloc gives, when the rounding overflows.
void* AlignedMalloc(void* /*ctx*/, size_t size) {
  if (size > SIZE_MAX - kAlignment) return nullptr;
  const size_t rounded =
      std::max(kAlignment, (size + kAlignment - 1) / kAlignment * kAlignment);
  return std::aligned_alloc(kAlignment, rounded);
}

void* AlignedCalloc(void* ctx, size_t count, size_t element_size) {
  if (element_size != 0 && count > SIZE_MAX / element_size) return nullptr;
  const size_t bytes = count * element_size;
  void* p = AlignedMalloc(ctx, bytes);
  if (p != nullptr) std::memset(p, 0, bytes);
  return p;
}

// NumPy does not pass the old size; glibc's malloc_usable_size gives at
// least that many bytes, all of them the old block's.
void* AlignedRealloc(void* ctx, void* old, size_t size) {
  if (old == nullptr) return AlignedMalloc(ctx, size);
  void* p = AlignedMalloc(ctx, size);
  if (p == nullptr) return nullptr;  // NumPy keeps `old`, as realloc's
  std::memcpy(p, old, std::min(size, malloc_usable_size(old)));
  std::free(old);
  return p;
}

void AlignedFree(void* /*ctx*/, void* p, size_t /*size*/) { std::free(p); }

PyDataMem_Handler aligned_handler = {
    "graphgc_aligned64",
    1,
    {nullptr, AlignedMalloc, AlignedCalloc, AlignedRealloc, AlignedFree},
};

}  // namespace

void UseAlignedNumpyAllocator() {
  if (_import_array() < 0) throw pybind11::error_already_set();
  PyObject* capsule = PyCapsule_New(&aligned_handler, "mem_handler", nullptr);
  if (capsule == nullptr) throw pybind11::error_already_set();
  PyObject* previous = PyDataMem_SetHandler(capsule);
  Py_DECREF(capsule);  // the context holds it now
  if (previous == nullptr) throw pybind11::error_already_set();
  Py_DECREF(previous);
}

std::string NumpyAllocatorName() {
  PyObject* capsule = PyDataMem_GetHandler();
  if (capsule == nullptr) throw pybind11::error_already_set();
  auto* handler = static_cast<PyDataMem_Handler*>(
      PyCapsule_GetPointer(capsule, "mem_handler"));
  Py_DECREF(capsule);
  if (handler == nullptr) throw pybind11::error_already_set();
  return handler->name;
}

}  // namespace graphgc::python
