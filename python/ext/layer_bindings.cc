// Layer, the layers:: factories, Optimizer and Loss, with Keras's argument
// names. Bad layer options are reported by Sequential creation, as in C++.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/ext/bindings.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;
using py::arg;

std::string Activation(const std::optional<std::string>& activation) {
  return activation.value_or("linear");
}

uint64_t Seed(const std::optional<uint64_t>& seed) { return seed.value_or(0); }

}  // namespace

void RegisterLayers(py::module_& m) {
  py::class_<Layer>(m, "Layer")
      .def_property_readonly("kind", &Layer::kind)
      .def_property_readonly("name", &Layer::name)
      .def_property_readonly("built", &Layer::built)
      .def_property_readonly("units", &Layer::units)
      .def("__eq__", [](const Layer& a, const Layer& b) { return a == b; });

  m.def(
      "input_layer",
      [](std::vector<int64_t> shape, std::string name) {
        return layers::Input(TensorShape(shape), std::move(name));
      },
      arg("shape"), arg("name") = "");
  m.def(
      "dense",
      [](int64_t units, std::optional<std::string> activation, bool use_bias,
         std::string name, std::optional<uint64_t> seed) {
        return layers::Dense(units, {.activation = Activation(activation),
                                     .use_bias = use_bias,
                                     .name = std::move(name),
                                     .seed = Seed(seed)});
      },
      arg("units"), arg("activation") = py::none(), arg("use_bias") = true,
      arg("name") = "", arg("seed") = py::none());
  m.def(
      "conv2d",
      [](int64_t filters, std::vector<int64_t> kernel_size,
         std::vector<int64_t> strides, std::string padding,
         std::optional<std::string> activation, bool use_bias, std::string name,
         std::optional<uint64_t> seed) {
        return layers::Conv2D(filters, std::move(kernel_size),
                              {.strides = std::move(strides),
                               .padding = std::move(padding),
                               .activation = Activation(activation),
                               .use_bias = use_bias,
                               .name = std::move(name),
                               .seed = Seed(seed)});
      },
      arg("filters"), arg("kernel_size"), arg("strides"), arg("padding"),
      arg("activation"), arg("use_bias"), arg("name"), arg("seed"));
  m.def(
      "max_pooling2d",
      [](std::vector<int64_t> pool_size, std::vector<int64_t> strides,
         std::string padding, std::string name) {
        return layers::MaxPooling2D(std::move(pool_size),
                                    {.strides = std::move(strides),
                                     .padding = std::move(padding),
                                     .name = std::move(name)});
      },
      arg("pool_size"), arg("strides"), arg("padding"), arg("name"));
  m.def("flatten", &layers::Flatten, arg("name") = "");
  m.def(
      "dropout",
      [](float rate, std::string name, std::optional<uint64_t> seed) {
        return layers::Dropout(rate, std::move(name), Seed(seed));
      },
      arg("rate"), arg("name") = "", arg("seed") = py::none());
  m.def(
      "batch_normalization",
      [](float momentum, float epsilon, std::string name) {
        return layers::BatchNormalization({.momentum = momentum,
                                           .epsilon = epsilon,
                                           .name = std::move(name)});
      },
      arg("momentum"), arg("epsilon"), arg("name"));
  m.def(
      "reshape",
      [](std::vector<int64_t> target_shape, std::string name) {
        return layers::Reshape(TensorShape(target_shape), std::move(name));
      },
      arg("target_shape"), arg("name") = "");
  m.def("activation", &layers::Activation, arg("activation"), arg("name") = "");

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

  py::class_<Loss>(m, "Loss").def_property_readonly("name", &Loss::name);
  m.def(
      "sparse_categorical_crossentropy",
      [](bool from_logits) {
        return losses::SparseCategoricalCrossentropy(
            {.from_logits = from_logits});
      },
      arg("from_logits"));
  m.def(
      "categorical_crossentropy",
      [](bool from_logits) {
        return losses::CategoricalCrossentropy({.from_logits = from_logits});
      },
      arg("from_logits"));
  m.def("mean_squared_error", &losses::MeanSquaredError);
}

}  // namespace graphgc::python
