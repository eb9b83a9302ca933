// KerasTensor, Input and layer calls: the symbolic half of the functional
// API (models/functional.h), from which graphgc/layers.py makes Keras's
// tensors. A refused Input or call raises at once (ValueError for
// InvalidArgument), as Keras's layer calls do; the C++ KerasTensor would
// carry the error to Functional::Create. They keep the GIL: a call only
// checks shapes, takes no lock and waits for no model.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/functional.h"
#include "models/layer.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/ext/bindings.h"
#include "python/ext/status_exception.h"
#include "runtime/tensor.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;
using py::arg;

KerasTensor Checked(KerasTensor out) {
  OkOrThrow(out.status());
  return out;
}

}  // namespace

void RegisterFunctional(py::module_& m) {
  py::class_<KerasTensor>(m, "KerasTensor")
      .def_property_readonly(
          "shape",
          [](const KerasTensor& t) {
            const absl::Span<const int64_t> dims = t.shape().dim_sizes();
            return std::vector<int64_t>(dims.begin(), dims.end());
          })
      .def_property_readonly("layer", &KerasTensor::layer);

  m.def(
      "input",
      [](std::vector<int64_t> shape, std::string name) {
        return Checked(Input(TensorShape(shape), std::move(name)));
      },
      arg("shape"), arg("name") = "");
  m.def(
      "call_layer",
      [](const Layer& layer, const KerasTensor& x) {
        return Checked(layer(x));
      },
      arg("layer"), arg("x"));
  m.def(
      "call_layer_on_list",
      [](const Layer& layer, const std::vector<KerasTensor>& xs) {
        return Checked(layer(xs));
      },
      arg("layer"), arg("xs"));
}

}  // namespace graphgc::python
