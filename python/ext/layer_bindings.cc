// Layer, the layer registry (every kind's keyword arguments, and layers made
// from Keras configs), Optimizer and Loss, with Keras's argument names. Bad
// layer options are reported by Sequential creation, as in C++.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/layers.h"
#include "models/losses.h"
#include "models/metrics.h"
#include "models/optimizers.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/ext/bindings.h"
#include "python/ext/status_exception.h"

namespace graphgc::python {

namespace py = pybind11;
using py::arg;

void RegisterLayers(py::module_& m) {
  py::class_<Layer>(m, "Layer")
      .def_property_readonly("kind", &Layer::kind)
      .def_property_readonly("name", &Layer::name)
      .def_property_readonly("built", &Layer::built)
      .def_property_readonly("units", &Layer::units)
      .def("__eq__", [](const Layer& a, const Layer& b) { return a == b; });

  // Every registered layer kind, its default layer name and its keyword
  // arguments, from which graphgc/layers.py generates its classes.
  m.def("layer_kinds", [] {
    py::list kinds;
    for (const layers::LayerKindInfo& kind : layers::RegisteredKinds()) {
      py::list fields;
      for (const layers::LayerFieldInfo& f : kind.fields) {
        fields.append(py::make_tuple(f.name, f.python, f.default_json));
      }
      kinds.append(py::make_tuple(kind.class_name, kind.default_name, fields));
    }
    return kinds;
  });
  // A layer of a registered kind from its Keras config (JSON text), through
  // the reader LoadModel uses.
  m.def(
      "make_layer",
      [](const std::string& class_name, const std::string& config_json) {
        return ValueOrThrow(layers::FromConfig(class_name, config_json));
      },
      arg("class_name"), arg("config_json"));

  py::class_<Optimizer>(m, "Optimizer")
      .def_property_readonly("name", &Optimizer::name);
  m.def(
      "adam",
      [](float learning_rate, float beta_1, float beta_2, float epsilon) {
        return optimizers::Adam({.learning_rate = learning_rate,
                                 .beta_1 = beta_1,
                                 .beta_2 = beta_2,
                                 .epsilon = epsilon});
      },
      arg("learning_rate"), arg("beta_1"), arg("beta_2"), arg("epsilon"));
  m.def(
      "sgd",
      [](float learning_rate, float momentum, bool nesterov) {
        return optimizers::SGD({.learning_rate = learning_rate,
                                .momentum = momentum,
                                .nesterov = nesterov});
      },
      arg("learning_rate"), arg("momentum"), arg("nesterov"));
  m.def(
      "rmsprop",
      [](float learning_rate, float rho, float momentum, float epsilon,
         bool centered) {
        return optimizers::RMSprop({.learning_rate = learning_rate,
                                    .rho = rho,
                                    .momentum = momentum,
                                    .epsilon = epsilon,
                                    .centered = centered});
      },
      arg("learning_rate"), arg("rho"), arg("momentum"), arg("epsilon"),
      arg("centered"));

  py::class_<Loss>(m, "Loss").def_property_readonly("name", &Loss::name);
  // A configured metric (models/metrics.h), from graphgc/metrics.py.
  py::class_<Metric>(m, "Metric")
      .def(py::init([](std::string kind, std::string name, int k,
                       float threshold, int num_thresholds) {
             return Metric{.kind = std::move(kind),
                           .name = std::move(name),
                           .k = k,
                           .threshold = threshold,
                           .num_thresholds = num_thresholds};
           }),
           arg("kind"), arg("name") = "", arg("k") = 5, arg("threshold") = 0.5f,
           arg("num_thresholds") = 200)
      .def_readonly("kind", &Metric::kind)
      .def_readonly("name", &Metric::name);
  // Every registered loss: (name, class name, default object name, aliases,
  // takes from_logits, takes label_smoothing, takes delta), from which
  // python/src/graphgc/losses.py makes its classes.
  m.def("loss_kinds", [] {
    py::list kinds;
    for (const losses::LossInfo& l : losses::RegisteredLosses()) {
      kinds.append(py::make_tuple(l.name, l.class_name, l.object_name,
                                  l.aliases, l.takes_from_logits,
                                  l.takes_label_smoothing, l.takes_delta));
    }
    return kinds;
  });
  m.def(
      "make_loss",
      [](const std::string& name, bool from_logits, float label_smoothing,
         float delta, const std::string& reduction) {
        return ValueOrThrow(
            losses::Get(name, {.from_logits = from_logits,
                               .label_smoothing = label_smoothing,
                               .delta = delta,
                               .reduction = reduction}));
      },
      arg("name"), arg("from_logits"), arg("label_smoothing"), arg("delta"),
      arg("reduction"));
}

}  // namespace graphgc::python
