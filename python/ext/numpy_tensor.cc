#include "python/ext/numpy_tensor.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "python/ext/gil.h"
#include "python/ext/status_exception.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;

// The dtype `role` wants for an array whose dtype is `dtype`.
py::dtype TargetDtype(const py::dtype& dtype, ArrayRole role,
                      const std::string& what) {
  const char kind = dtype.kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
    throw py::value_error(absl::StrCat(
        what, ": dtype ", std::string(py::str(static_cast<py::handle>(dtype))),
        " is not a number type; expected float32, int32 or int64 "
        "(other int, uint, bool and float dtypes are converted)"));
  }
  if (role == ArrayRole::kFeatures || kind == 'f') {
    return py::dtype::of<float>();
  }
  if (dtype.is(py::dtype::of<int32_t>()) ||
      (kind == 'i' && dtype.itemsize() == 4)) {
    return py::dtype::of<int32_t>();
  }
  return py::dtype::of<int64_t>();
}

template <typename T>
Tensor CopyIn(const py::array& array, const TensorShape& shape,
              const std::string& what) {
  absl::Span<const T> data(static_cast<const T*>(array.data()),
                           static_cast<size_t>(array.size()));
  absl::StatusOr<Tensor> tensor = Tensor::FromData<T>(shape, data);
  if (!tensor.ok()) {
    ThrowStatus(
        absl::Status(tensor.status().code(),
                     absl::StrCat(what, ": ", tensor.status().message())));
  }
  return *std::move(tensor);
}

// What a lent array's tensor calls when its last sharer goes: drops the
// reference Lend took, on whichever thread that is (taking the GIL there).
// Once the interpreter is exiting or gone the reference is left, not
// dropped.
void ReleaseLentArray(void* array) {
  if (!Py_IsInitialized()) return;
  PythonCall python;
  if (python.entered()) Py_DECREF(static_cast<PyObject*>(array));
}

// A tensor reading `array`'s memory, holding a reference to it; nullopt
// when Tensor::Borrow refuses it (unaligned memory, a shape no tensor has).
std::optional<Tensor> Lend(const py::array& array, DataType dtype,
                           const TensorShape& shape) {
  PyObject* ref = array.ptr();
  absl::StatusOr<Tensor> tensor = Tensor::Borrow(
      dtype, shape, array.data(), static_cast<size_t>(array.nbytes()),
      &ReleaseLentArray, ref);
  if (!tensor.ok()) return std::nullopt;  // nothing taken: copy instead
  Py_INCREF(ref);                         // dropped by ReleaseLentArray
  return *std::move(tensor);
}

}  // namespace

Tensor TensorFromArray(py::handle obj, ArrayRole role, ArrayUse use,
                       const std::string& what) {
  if (obj.is_none()) throw py::value_error(what + ": None is not an array");
  py::array array = py::array::ensure(obj);
  if (!array) {
    PyErr_Clear();
    throw py::value_error(absl::StrCat(
        what, ": cannot be read as an array (",
        std::string(py::str(py::type::of(obj).attr("__name__"))), ")"));
  }
  py::dtype target = TargetDtype(array.dtype(), role, what);
  const bool contiguous =
      (array.flags() & py::array::c_style) == py::array::c_style;
  if (!array.dtype().is(target) || !contiguous) {
    // NumPy's own conversion: C order, native byte order, `target` dtype.
    py::module_ np = py::module_::import("numpy");
    array = np.attr("ascontiguousarray")(array, target);
  }
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  TensorShape shape(dims);
  const DataType dtype = target.is(py::dtype::of<float>())     ? DT_FLOAT
                         : target.is(py::dtype::of<int32_t>()) ? DT_INT32
                                                               : DT_INT64;
  if (use == ArrayUse::kDuringTheCall) {
    if (std::optional<Tensor> lent = Lend(array, dtype, shape)) {
      return *std::move(lent);
    }
  }
  switch (dtype) {
    case DT_FLOAT:
      return CopyIn<float>(array, shape, what);
    case DT_INT32:
      return CopyIn<int32_t>(array, shape, what);
    default:
      return CopyIn<int64_t>(array, shape, what);
  }
}

namespace {

template <typename T>
py::array Wrap(Tensor tensor) {
  std::vector<py::ssize_t> shape(tensor.shape().dim_sizes().begin(),
                                 tensor.shape().dim_sizes().end());
  if (!tensor.RefCountIsOne() || tensor.num_elements() == 0) {
    // Shared (or no) buffer: NumPy copies the elements into its own.
    return py::array_t<T>(shape, tensor.data<T>().data());
  }
  auto* owner = new Tensor(std::move(tensor));
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array_t<T>(shape, owner->mutable_data<T>().data(), base);
}

}  // namespace

py::array ArrayFromTensor(Tensor tensor) {
  switch (tensor.dtype()) {
    case DT_FLOAT:
      return Wrap<float>(std::move(tensor));
    case DT_INT32:
      return Wrap<int32_t>(std::move(tensor));
    case DT_INT64:
      return Wrap<int64_t>(std::move(tensor));
    case DT_BOOL:
      return Wrap<bool>(std::move(tensor));
    default:
      throw std::runtime_error(absl::StrCat("a tensor of dtype ",
                                            DataTypeString(tensor.dtype()),
                                            " has no NumPy equivalent"));
  }
}

py::list ArraysFromTensors(std::vector<Tensor> tensors) {
  py::list out;
  for (Tensor& t : tensors) out.append(ArrayFromTensor(std::move(t)));
  return out;
}

}  // namespace graphgc::python
