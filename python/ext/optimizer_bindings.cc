// make_optimizer: any optimizer of models/optimizers.h from its Keras name
// and keyword values, which python/src/graphgc/optimizers.py fills with
// Keras's defaults and checks first.
#include <optional>
#include <stdexcept>
#include <string>

#include "models/optimizers.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/ext/bindings.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;

float F(const py::dict& d, const char* key) { return d[key].cast<float>(); }
bool B(const py::dict& d, const char* key) { return d[key].cast<bool>(); }

Optimizer Make(const std::string& name, const py::dict& d,
               const BaseOptimizerOptions& base) {
  const float lr = F(d, "learning_rate");
  if (name == "sgd") {
    return optimizers::SGD({.learning_rate = lr,
                            .momentum = F(d, "momentum"),
                            .nesterov = B(d, "nesterov")},
                           base);
  }
  if (name == "adam" || name == "adamw") {
    const float b1 = F(d, "beta_1"), b2 = F(d, "beta_2"), eps = F(d, "epsilon");
    const bool ams = B(d, "amsgrad");
    if (name == "adamw") {
      return optimizers::AdamW({.learning_rate = lr,
                                .beta_1 = b1,
                                .beta_2 = b2,
                                .epsilon = eps,
                                .amsgrad = ams},
                               base);
    }
    return optimizers::Adam({.learning_rate = lr,
                             .beta_1 = b1,
                             .beta_2 = b2,
                             .epsilon = eps,
                             .amsgrad = ams},
                            base);
  }
  if (name == "rmsprop") {
    return optimizers::RMSprop({.learning_rate = lr,
                                .rho = F(d, "rho"),
                                .momentum = F(d, "momentum"),
                                .epsilon = F(d, "epsilon"),
                                .centered = B(d, "centered")},
                               base);
  }
  if (name == "adagrad") {
    return optimizers::Adagrad(
        {.learning_rate = lr,
         .initial_accumulator_value = F(d, "initial_accumulator_value"),
         .epsilon = F(d, "epsilon")},
        base);
  }
  if (name == "adamax" || name == "nadam") {
    const float b1 = F(d, "beta_1"), b2 = F(d, "beta_2"), eps = F(d, "epsilon");
    if (name == "nadam") {
      return optimizers::Nadam(
          {.learning_rate = lr, .beta_1 = b1, .beta_2 = b2, .epsilon = eps},
          base);
    }
    return optimizers::Adamax(
        {.learning_rate = lr, .beta_1 = b1, .beta_2 = b2, .epsilon = eps},
        base);
  }
  if (name == "adadelta") {
    return optimizers::Adadelta(
        {.learning_rate = lr, .rho = F(d, "rho"), .epsilon = F(d, "epsilon")},
        base);
  }
  if (name == "lion") {
    return optimizers::Lion({.learning_rate = lr,
                             .beta_1 = F(d, "beta_1"),
                             .beta_2 = F(d, "beta_2")},
                            base);
  }
  throw py::value_error("unknown optimizer '" + name + "'");
}

}  // namespace

void RegisterOptimizers(py::module_& m) {
  m.def(
      "make_optimizer",
      [](const std::string& name, const py::dict& options,
         std::optional<float> weight_decay, std::optional<float> clipnorm,
         std::optional<float> clipvalue, std::optional<float> global_clipnorm) {
        return Make(name, options,
                    {.weight_decay = weight_decay,
                     .clipnorm = clipnorm,
                     .clipvalue = clipvalue,
                     .global_clipnorm = global_clipnorm});
      },
      py::arg("name"), py::arg("options"), py::arg("weight_decay"),
      py::arg("clipnorm"), py::arg("clipvalue"), py::arg("global_clipnorm"));
}

}  // namespace graphgc::python
