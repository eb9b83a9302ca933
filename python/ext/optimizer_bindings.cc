// make_optimizer: any optimizer of models/optimizers.h from its Keras name
// and keyword values, which python/src/graphgc/optimizers.py fills with
// Keras's defaults and checks first; make_schedule: a learning-rate schedule
// (models/learning_rate_schedule.h) from its Keras class name and
// get_config() values (python/src/graphgc/schedules.py).
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/learning_rate_schedule.h"
#include "models/optimizers.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/ext/bindings.h"
#include "python/ext/status_exception.h"

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

// A number argument of a schedule (int, float or NumPy scalar).
double Number(const py::dict& d, const char* schedule, const char* key) {
  try {
    return d[key].cast<double>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(schedule) + ": " + key +
                         " must be a number, not " +
                         std::string(py::repr(d[key])));
  }
}

std::vector<double> Numbers(const py::dict& d, const char* schedule,
                            const char* key) {
  std::vector<double> out;
  for (py::handle x : py::iter(d[key])) {
    try {
      out.push_back(x.cast<double>());
    } catch (const py::cast_error&) {
      throw py::type_error(std::string(schedule) + ": " + key +
                           " must be a list of numbers, not " +
                           std::string(py::repr(d[key])));
    }
  }
  return out;
}

bool Truth(const py::dict& d, const char* key) {
  return py::bool_(d[key]).cast<bool>();
}

std::string Name(const py::dict& d) { return py::str(d["name"]); }

// The schedule graphgc.optimizers.schedules.<class_name> describes with
// its get_config() values; Create's checks raise ValueError.
LearningRateSchedule MakeSchedule(const std::string& class_name,
                                  const py::dict& d) {
  const char* c = class_name.c_str();
  LearningRateSchedule::Options options;
  if (class_name == "ExponentialDecay") {
    options = schedules::ExponentialDecay{
        .initial_learning_rate = Number(d, c, "initial_learning_rate"),
        .decay_steps = Number(d, c, "decay_steps"),
        .decay_rate = Number(d, c, "decay_rate"),
        .staircase = Truth(d, "staircase"),
        .name = Name(d)};
  } else if (class_name == "InverseTimeDecay") {
    options = schedules::InverseTimeDecay{
        .initial_learning_rate = Number(d, c, "initial_learning_rate"),
        .decay_steps = Number(d, c, "decay_steps"),
        .decay_rate = Number(d, c, "decay_rate"),
        .staircase = Truth(d, "staircase"),
        .name = Name(d)};
  } else if (class_name == "PiecewiseConstantDecay") {
    options = schedules::PiecewiseConstantDecay{
        .boundaries = Numbers(d, c, "boundaries"),
        .values = Numbers(d, c, "values"),
        .name = Name(d)};
  } else if (class_name == "PolynomialDecay") {
    options = schedules::PolynomialDecay{
        .initial_learning_rate = Number(d, c, "initial_learning_rate"),
        .decay_steps = Number(d, c, "decay_steps"),
        .end_learning_rate = Number(d, c, "end_learning_rate"),
        .power = Number(d, c, "power"),
        .cycle = Truth(d, "cycle"),
        .name = Name(d)};
  } else if (class_name == "CosineDecay") {
    schedules::CosineDecay o{
        .initial_learning_rate = Number(d, c, "initial_learning_rate"),
        .decay_steps = Number(d, c, "decay_steps"),
        .alpha = Number(d, c, "alpha"),
        .warmup_steps = Number(d, c, "warmup_steps"),
        .name = Name(d)};
    if (!d["warmup_target"].is_none()) {
      o.warmup_target = Number(d, c, "warmup_target");
    }
    options = o;
  } else if (class_name == "CosineDecayRestarts") {
    options = schedules::CosineDecayRestarts{
        .initial_learning_rate = Number(d, c, "initial_learning_rate"),
        .first_decay_steps = Number(d, c, "first_decay_steps"),
        .t_mul = Number(d, c, "t_mul"),
        .m_mul = Number(d, c, "m_mul"),
        .alpha = Number(d, c, "alpha"),
        .name = Name(d)};
  } else {
    throw py::value_error("unknown learning-rate schedule '" + class_name +
                          "'");
  }
  return ValueOrThrow(LearningRateSchedule::Create(std::move(options)));
}

}  // namespace

void RegisterOptimizers(py::module_& m) {
  py::class_<LearningRateSchedule>(m, "LearningRateSchedule")
      .def("learning_rate_at", &LearningRateSchedule::LearningRateAt,
           py::arg("step"))
      .def_property_readonly("class_name", &LearningRateSchedule::class_name);
  m.def("make_schedule", &MakeSchedule, py::arg("class_name"),
        py::arg("config"));
  m.def(
      "make_optimizer",
      [](const std::string& name, const py::dict& options,
         std::optional<float> weight_decay, std::optional<float> clipnorm,
         std::optional<float> clipvalue, std::optional<float> global_clipnorm,
         std::optional<LearningRateSchedule> schedule) {
        Optimizer optimizer = Make(name, options,
                                   {.weight_decay = weight_decay,
                                    .clipnorm = clipnorm,
                                    .clipvalue = clipvalue,
                                    .global_clipnorm = global_clipnorm});
        optimizer.learning_rate_schedule = std::move(schedule);
        return optimizer;
      },
      py::arg("name"), py::arg("options"), py::arg("weight_decay"),
      py::arg("clipnorm"), py::arg("clipvalue"), py::arg("global_clipnorm"),
      py::arg("schedule") = py::none());
}

}  // namespace graphgc::python
