#include "python/ext/numpy_allocator.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
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

// Blocks the handler handed out and freed, in every context and thread.
std::atomic<int64_t> allocations{0};
std::atomic<int64_t> frees{0};

// std::aligned_alloc wants a size that is a multiple of the alignment (and
// not zero); nullptr, as malloc gives, when the rounding overflows.
void* AllocateAligned(size_t size) {
  if (size > SIZE_MAX - kAlignment) return nullptr;
  const size_t rounded =
      std::max(kAlignment, (size + kAlignment - 1) / kAlignment * kAlignment);
  return std::aligned_alloc(kAlignment, rounded);
}

void* AlignedMalloc(void* /*ctx*/, size_t size) {
  void* p = AllocateAligned(size);
  if (p != nullptr) allocations.fetch_add(1, std::memory_order_relaxed);
  return p;
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
  void* p = AllocateAligned(size);
  if (p == nullptr) return nullptr;  // NumPy keeps `old`, as realloc's
  std::memcpy(p, old, std::min(size, malloc_usable_size(old)));
  std::free(old);
  return p;
}

void AlignedFree(void* /*ctx*/, void* p, size_t /*size*/) {
  if (p != nullptr) frees.fetch_add(1, std::memory_order_relaxed);
  std::free(p);
}

PyDataMem_Handler aligned_handler = {
    "graphgc_aligned64",
    1,
    {nullptr, AlignedMalloc, AlignedCalloc, AlignedRealloc, AlignedFree},
};

constexpr const char* kCapsuleName = "mem_handler";

bool IsAlignedHandler(PyObject* capsule) {
  return PyCapsule_GetPointer(capsule, kCapsuleName) == &aligned_handler;
}

// Per context, the handler the aligned one replaced there (None or unset
// when it is not installed): a context variable of ours beside NumPy's, so
// each context (thread) gets back exactly its own. Made once, under the
// GIL, and kept for the process, as the module's other statics are.
PyObject* ReplacedHandlerVar() {
  static PyObject* var = nullptr;  // the GIL guards it
  if (var == nullptr) {
    var = PyContextVar_New("graphgc_replaced_numpy_allocator", nullptr);
    if (var == nullptr) throw pybind11::error_already_set();
  }
  return var;
}

// A new reference to the calling context's current handler capsule.
PyObject* CurrentHandler() {
  PyObject* capsule = PyDataMem_GetHandler();
  if (capsule == nullptr) throw pybind11::error_already_set();
  return capsule;
}

void InstallAligned() {
  PyObject* var = ReplacedHandlerVar();
  PyObject* capsule = PyCapsule_New(&aligned_handler, kCapsuleName, nullptr);
  if (capsule == nullptr) throw pybind11::error_already_set();
  PyObject* previous = PyDataMem_SetHandler(capsule);
  Py_DECREF(capsule);  // the context holds it now
  if (previous == nullptr) throw pybind11::error_already_set();
  PyObject* token = PyContextVar_Set(var, previous);
  if (token == nullptr) {
    // Nothing half-changed: NumPy's handler goes back before the error.
    pybind11::error_already_set error;
    PyObject* ours = PyDataMem_SetHandler(previous);
    Py_XDECREF(ours);
    Py_DECREF(previous);
    throw error;
  }
  Py_DECREF(token);
  Py_DECREF(previous);  // our variable holds it now
}

void RestoreReplaced() {
  PyObject* var = ReplacedHandlerVar();
  PyObject* replaced = nullptr;
  if (PyContextVar_Get(var, nullptr, &replaced) < 0) {
    throw pybind11::error_already_set();
  }
  if (replaced == Py_None) Py_CLEAR(replaced);
  // NULL (nothing recorded) puts NumPy's default handler back.
  PyObject* ours = PyDataMem_SetHandler(replaced);
  Py_XDECREF(replaced);
  if (ours == nullptr) throw pybind11::error_already_set();
  Py_DECREF(ours);
  PyObject* token = PyContextVar_Set(var, Py_None);
  if (token == nullptr) throw pybind11::error_already_set();
  Py_DECREF(token);
}

}  // namespace

void LoadNumpyApi() {
  if (_import_array() < 0) throw pybind11::error_already_set();
}

bool UseAlignedNumpyAllocator(bool enabled) {
  PyObject* current = CurrentHandler();
  const bool was_aligned = IsAlignedHandler(current);
  Py_DECREF(current);
  if (PyErr_Occurred()) PyErr_Clear();  // a foreign capsule of another name
  if (enabled && !was_aligned) InstallAligned();
  if (!enabled && was_aligned) RestoreReplaced();
  return was_aligned;
}

std::string NumpyAllocatorName() {
  PyObject* capsule = CurrentHandler();
  auto* handler = static_cast<PyDataMem_Handler*>(
      PyCapsule_GetPointer(capsule, kCapsuleName));
  Py_DECREF(capsule);
  if (handler == nullptr) throw pybind11::error_already_set();
  return handler->name;
}

AlignedAllocatorCounts AlignedAllocatorCountsForTesting() {
  return {.allocations = allocations.load(std::memory_order_relaxed),
          .frees = frees.load(std::memory_order_relaxed)};
}

}  // namespace graphgc::python
