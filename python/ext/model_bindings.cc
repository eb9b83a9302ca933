// Sequential, Functional (the functional API's model, of KerasTensors:
// functional_bindings.cc) and load_model. The two models share their
// training methods (DefineModelMethods). Every call that waits for the model
// (compile, fit, evaluate, predict, get_weights, set_weights, summary, save,
// learning_rate, and the accessors that take the model's lock) converts its
// Python arguments first, then releases the GIL while C++ works (a running
// fit's Python callbacks need it), on a copy of the model handle: another
// thread dropping the last Python reference meanwhile only drops its own
// copy, and the model lives until the call returns. Python results are made
// once the GIL is back.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/callbacks.h"
#include "models/functional.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/ext/bindings.h"
#include "python/ext/gil.h"
#include "python/ext/numpy_tensor.h"
#include "python/ext/py_callback.h"
#include "python/ext/status_exception.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;
using py::arg;

// The callbacks of one fit: C++ callbacks as given, Python objects behind
// PyCallback adapters (kept here too, to fetch their exceptions).
struct FitCallbacks {
  std::vector<std::shared_ptr<Callback>> all;
  std::vector<std::shared_ptr<PyCallback>> python;
};

FitCallbacks MakeCallbacks(const py::list& given, py::handle base) {
  FitCallbacks out;
  for (py::handle item : given) {
    if (py::isinstance<Callback>(item)) {
      out.all.push_back(item.cast<std::shared_ptr<Callback>>());
    } else {
      auto adapter = std::make_shared<PyCallback>(
          py::reinterpret_borrow<py::object>(item), base);
      out.python.push_back(adapter);
      out.all.push_back(adapter);
    }
  }
  return out;
}

std::optional<std::pair<Tensor, Tensor>> ValidationData(
    const py::object& data) {
  if (data.is_none()) return std::nullopt;
  py::tuple pair = py::tuple(data);
  if (pair.size() != 2) {
    throw py::value_error(
        "validation_data must be a pair (x_val, y_val), got " +
        std::to_string(pair.size()) + " items");
  }
  return std::make_pair(
      TensorFromArray(pair[0], ArrayRole::kFeatures, ArrayUse::kDuringTheCall,
                      "validation_data[0]"),
      TensorFromArray(pair[1], ArrayRole::kTargets, ArrayUse::kDuringTheCall,
                      "validation_data[1]"));
}

// One tensor per array of `arrays`, named "<what>[i]" in errors.
std::vector<Tensor> TensorsFromArrays(const py::sequence& arrays,
                                      ArrayRole role, const std::string& what) {
  std::vector<Tensor> out;
  out.reserve(py::len(arrays));
  for (size_t i = 0; i < py::len(arrays); ++i) {
    out.push_back(TensorFromArray(arrays[i], role, ArrayUse::kDuringTheCall,
                                  what + "[" + std::to_string(i) + "]"));
  }
  return out;
}

// Fit's run: `run(handle, options)` without the GIL, with the callbacks'
// adapters; a callback's exception wins over the status it caused.
template <typename Model, typename Run>
py::tuple RunFit(const Model& model, FitOptions options,
                 const py::list& callbacks, py::handle callback_base, Run run) {
  FitCallbacks fit_callbacks = MakeCallbacks(callbacks, callback_base);
  options.callbacks = fit_callbacks.all;
  Model handle = model;
  absl::StatusOr<History> history;
  {
    GilReleased nogil;
    history = run(handle, std::move(options));
  }
  // A callback's own exception wins over the status it caused.
  for (const std::shared_ptr<PyCallback>& adapter : fit_callbacks.python) {
    if (std::optional<py::error_already_set> e = adapter->TakeError()) {
      throw *std::move(e);
    }
  }
  History h = ValueOrThrow(std::move(history), ErrorContext::kFit);
  return py::make_tuple(h.history, h.epoch, h.warnings);
}

// Evaluate's sample_weight: none for None.
std::optional<Tensor> SampleWeightFromArray(py::handle sample_weight) {
  if (sample_weight.is_none()) return std::nullopt;
  return TensorFromArray(sample_weight, ArrayRole::kFeatures,
                         ArrayUse::kDuringTheCall, "sample_weight");
}

// Fit's Keras arguments beyond the first ones, from models.py's dict (its
// keys are FitOptions' names; None and absent keys leave the default).
void TakeFitArguments(const py::dict& args, FitOptions& options) {
  auto get = [&](const char* key) -> py::object {
    if (!args.contains(key)) return py::none();
    return args[key];
  };
  if (py::object v = get("initial_epoch"); !v.is_none()) {
    options.initial_epoch = v.cast<int>();
  }
  if (py::object v = get("steps_per_epoch"); !v.is_none()) {
    options.steps_per_epoch = v.cast<int64_t>();
  }
  if (py::object v = get("validation_steps"); !v.is_none()) {
    options.validation_steps = v.cast<int64_t>();
  }
  if (py::object v = get("validation_batch_size"); !v.is_none()) {
    options.validation_batch_size = v.cast<int>();
  }
  if (py::object v = get("validation_freq"); !v.is_none()) {
    options.validation_freq = v.cast<int>();
  }
  if (py::object v = get("validation_epochs"); !v.is_none()) {
    options.validation_epochs = v.cast<std::vector<int>>();
  }
  if (py::object v = get("class_weight"); !v.is_none()) {
    options.class_weight = v.cast<std::map<int64_t, float>>();
  }
  options.sample_weight = SampleWeightFromArray(get("sample_weight"));
  if (py::object v = get("validation_sample_weight"); !v.is_none()) {
    options.validation_sample_weight =
        TensorFromArray(v, ArrayRole::kFeatures, ArrayUse::kDuringTheCall,
                        "validation_data[2]");
  }
}

template <typename Model>
py::tuple Fit(const Model& model, py::handle x, py::handle y, int epochs,
              int batch_size, bool shuffle, int verbose,
              const py::list& callbacks, const py::object& validation_data,
              uint64_t seed, py::handle callback_base, double validation_split,
              const py::dict& fit_args) {
  FitOptions options{.epochs = epochs,
                     .batch_size = batch_size,
                     .shuffle = shuffle,
                     .verbose = verbose,
                     .validation_data = ValidationData(validation_data),
                     .seed = seed,
                     .validation_split = validation_split};
  TakeFitArguments(fit_args, options);
  Tensor xt =
      TensorFromArray(x, ArrayRole::kFeatures, ArrayUse::kDuringTheCall, "x");
  Tensor yt =
      TensorFromArray(y, ArrayRole::kTargets, ArrayUse::kDuringTheCall, "y");
  return RunFit(model, std::move(options), callbacks, callback_base,
                [&](Model& handle, FitOptions o) {
                  return handle.Fit(xt, yt, std::move(o));
                });
}

// Functional's list forms (graphgc/models.py orders the lists).
py::tuple FitLists(const Functional& model, const py::sequence& x,
                   const py::sequence& y, int epochs, int batch_size,
                   bool shuffle, int verbose, const py::list& callbacks,
                   const py::object& validation_data, uint64_t seed,
                   py::handle callback_base, double validation_split,
                   const py::dict& fit_args) {
  FitOptions options{.epochs = epochs,
                     .batch_size = batch_size,
                     .shuffle = shuffle,
                     .verbose = verbose,
                     .seed = seed,
                     .validation_split = validation_split};
  TakeFitArguments(fit_args, options);
  if (!validation_data.is_none()) {
    py::tuple pair = py::tuple(validation_data);
    options.validation_lists.emplace(
        TensorsFromArrays(pair[0], ArrayRole::kFeatures, "validation_data[0]"),
        TensorsFromArrays(pair[1], ArrayRole::kTargets, "validation_data[1]"));
  }
  std::vector<Tensor> xs = TensorsFromArrays(x, ArrayRole::kFeatures, "x");
  std::vector<Tensor> ys = TensorsFromArrays(y, ArrayRole::kTargets, "y");
  return RunFit(model, std::move(options), callbacks, callback_base,
                [&](Functional& handle, FitOptions o) {
                  return handle.Fit(std::move(xs), std::move(ys), std::move(o));
                });
}

// Functional's methods of several inputs and outputs.
void DefineListMethods(py::class_<Functional>& cls) {
  cls.def_property_readonly("input_names", &Functional::input_names)
      .def_property_readonly("output_names", &Functional::output_names)
      .def(
          "compile_outputs",
          [](const Functional& model, Optimizer optimizer,
             const std::vector<std::optional<Loss>>& losses,
             std::vector<double> loss_weights,
             std::vector<std::vector<std::string>> output_metrics) {
            CompileOptions options{.optimizer = optimizer,
                                   .loss_weights = std::move(loss_weights),
                                   .output_metrics = std::move(output_metrics)};
            for (const std::optional<Loss>& loss : losses) {
              options.losses.push_back(loss.value_or(Loss()));
            }
            Functional handle = model;
            absl::Status s;
            {
              GilReleased nogil;
              s = handle.Compile(std::move(options));
            }
            OkOrThrow(s);
          },
          arg("optimizer"), arg("losses"), arg("loss_weights"),
          arg("output_metrics"))
      .def("fit_lists", &FitLists, arg("x"), arg("y"), arg("epochs"),
           arg("batch_size"), arg("shuffle"), arg("verbose"), arg("callbacks"),
           arg("validation_data"), arg("seed"), arg("callback_base"),
           arg("validation_split") = 0.0, arg("fit_args") = py::dict())
      .def(
          "evaluate_lists",
          [](const Functional& model, const py::sequence& x,
             const py::sequence& y, int batch_size, py::handle sample_weight,
             int verbose) {
            std::vector<Tensor> xs =
                TensorsFromArrays(x, ArrayRole::kFeatures, "x");
            std::vector<Tensor> ys =
                TensorsFromArrays(y, ArrayRole::kTargets, "y");
            std::optional<Tensor> wt = SampleWeightFromArray(sample_weight);
            Functional handle = model;
            absl::StatusOr<std::map<std::string, float>> out;
            {
              GilReleased nogil;
              out = wt.has_value()
                        ? handle.Evaluate(std::move(xs), std::move(ys), *wt,
                                          batch_size, verbose)
                        : handle.Evaluate(std::move(xs), std::move(ys),
                                          batch_size, verbose);
            }
            return ValueOrThrow(std::move(out));
          },
          arg("x"), arg("y"), arg("batch_size"),
          arg("sample_weight") = py::none(), arg("verbose") = 0)
      .def(
          "predict_lists",
          [](const Functional& model, const py::sequence& x, int batch_size,
             int verbose) {
            std::vector<Tensor> xs =
                TensorsFromArrays(x, ArrayRole::kFeatures, "x");
            Functional handle = model;
            absl::StatusOr<std::vector<Tensor>> out;
            {
              GilReleased nogil;
              out = handle.Predict(std::move(xs), batch_size, verbose);
            }
            return ArraysFromTensors(ValueOrThrow(std::move(out)));
          },
          arg("x"), arg("batch_size"), arg("verbose") = 0);
}

// `call(handle)` without the GIL (WithoutGil) on a copy of the model's
// handle.
template <typename Model, typename Call>
auto Unlocked(const Model& model, Call call) {
  Model handle = model;
  return WithoutGil([&] { return call(handle); });
}

std::vector<Tensor> WeightsFromArrays(const py::sequence& arrays) {
  std::vector<Tensor> out;
  out.reserve(py::len(arrays));
  for (size_t i = 0; i < py::len(arrays); ++i) {
    out.push_back(TensorFromArray(arrays[i], ArrayRole::kFeatures,
                                  ArrayUse::kKept,
                                  "weights[" + std::to_string(i) + "]"));
  }
  return out;
}

// The methods both models have, as Sequential's (models/sequential.h).
template <typename Model>
void DefineModelMethods(py::class_<Model>& cls) {
  cls.def_property_readonly("name", &Model::name)
      .def_property_readonly("layers", &Model::layers)
      .def_property_readonly("compiled",
                             [](const Model& model) {
                               return Unlocked(model, [](const Model& handle) {
                                 return handle.compiled();
                               });
                             })
      .def(
          "compile",
          [](const Model& model, Optimizer optimizer, Loss loss,
             std::vector<std::string> metrics,
             std::vector<Metric> configured_metrics) {
            Model handle = model;
            absl::Status s;
            {
              GilReleased nogil;
              s = handle.Compile(
                  {.optimizer = optimizer,
                   .loss = loss,
                   .metrics = std::move(metrics),
                   .configured_metrics = std::move(configured_metrics)});
            }
            OkOrThrow(s);
          },
          arg("optimizer"), arg("loss"), arg("metrics"),
          arg("configured_metrics") = std::vector<Metric>{})
      .def("fit", &Fit<Model>, arg("x"), arg("y"), arg("epochs"),
           arg("batch_size"), arg("shuffle"), arg("verbose"), arg("callbacks"),
           arg("validation_data"), arg("seed"), arg("callback_base"),
           arg("validation_split") = 0.0, arg("fit_args") = py::dict())
      .def(
          "evaluate",
          [](const Model& model, py::handle x, py::handle y, int batch_size,
             py::handle sample_weight, int verbose) {
            Tensor xt = TensorFromArray(x, ArrayRole::kFeatures,
                                        ArrayUse::kDuringTheCall, "x");
            Tensor yt = TensorFromArray(y, ArrayRole::kTargets,
                                        ArrayUse::kDuringTheCall, "y");
            std::optional<Tensor> wt = SampleWeightFromArray(sample_weight);
            Model handle = model;
            absl::StatusOr<std::map<std::string, float>> out;
            {
              GilReleased nogil;
              out = wt.has_value()
                        ? handle.Evaluate(xt, yt, *wt, batch_size, verbose)
                        : handle.Evaluate(xt, yt, batch_size, verbose);
            }
            return ValueOrThrow(std::move(out));
          },
          arg("x"), arg("y"), arg("batch_size"),
          arg("sample_weight") = py::none(), arg("verbose") = 0)
      .def(
          "predict",
          [](const Model& model, py::handle x, int batch_size, int verbose) {
            Tensor xt = TensorFromArray(x, ArrayRole::kFeatures,
                                        ArrayUse::kDuringTheCall, "x");
            Model handle = model;
            absl::StatusOr<Tensor> out;
            {
              GilReleased nogil;
              out = handle.Predict(xt, batch_size, verbose);
            }
            return ArrayFromTensor(ValueOrThrow(std::move(out)));
          },
          arg("x"), arg("batch_size"), arg("verbose") = 0)
      .def("get_weights",
           [](const Model& model) {
             return ArraysFromTensors(Unlocked(model, [](const Model& handle) {
               return handle.GetWeights();
             }));
           })
      .def(
          "set_weights",
          [](const Model& model, const py::sequence& weights) {
            std::vector<Tensor> tensors = WeightsFromArrays(weights);
            Model handle = model;
            absl::Status s;
            {
              GilReleased nogil;
              s = handle.SetWeights(tensors);
            }
            OkOrThrow(s);
          },
          arg("weights"))
      .def("summary",
           [](const Model& model) {
             return Unlocked(
                 model, [](const Model& handle) { return handle.Summary(); });
           })
      .def(
          "save",
          [](const Model& model, const std::string& dir) {
            Model handle = model;
            absl::Status s;
            {
              GilReleased nogil;
              s = handle.Save(dir);
            }
            OkOrThrow(s, ErrorContext::kFile);
          },
          arg("dir"))
      .def_property(
          "learning_rate",
          [](const Model& model) {
            return ValueOrThrow(Unlocked(model, [](const Model& handle) {
              return handle.learning_rate();
            }));
          },
          [](const Model& model, float rate) {
            OkOrThrow(Unlocked(model, [rate](Model& handle) {
              return handle.SetLearningRate(rate);
            }));
          })
      .def_property_readonly(
          "iterations",
          [](const Model& model) {
            return ValueOrThrow(Unlocked(model, [](const Model& handle) {
              return handle.iterations();
            }));
          })
      .def_property("stop_training", &Model::stop_training,
                    [](Model& model, bool stop) {
                      if (stop) model.StopTraining();
                    })
      .def("graph_roots", [](const Model& model) {
        return Unlocked(model, [](const Model& handle) {
          return static_cast<int64_t>(handle.GraphRoots().size());
        });
      });
}

}  // namespace

void RegisterModels(py::module_& m) {
  py::class_<Sequential> sequential(m, "Sequential");
  sequential.def(py::init([](std::vector<Layer> layers, std::string name) {
                   absl::StatusOr<Sequential> model;
                   {
                     GilReleased nogil;
                     model = Sequential::Create(std::move(layers),
                                                {.name = std::move(name)});
                   }
                   return ValueOrThrow(std::move(model));
                 }),
                 arg("layers"), arg("name") = "");
  DefineModelMethods(sequential);

  py::class_<Functional> functional(m, "Functional");
  functional
      .def(py::init([](std::vector<KerasTensor> inputs,
                       std::vector<KerasTensor> outputs, std::string name) {
             absl::StatusOr<Functional> model;
             {
               GilReleased nogil;
               model = Functional::Create(std::move(inputs), std::move(outputs),
                                          {.name = std::move(name)});
             }
             return ValueOrThrow(std::move(model));
           }),
           arg("inputs"), arg("outputs"), arg("name") = "")
      .def_property_readonly("inputs", &Functional::inputs)
      .def_property_readonly("outputs", &Functional::outputs);
  DefineModelMethods(functional);
  DefineListMethods(functional);

  m.def(
      "load_model",
      [](const std::string& dir, bool compile) {
        // The saved kind: a Sequential or a Functional (pybind11's variant
        // caster returns the alternative held).
        absl::StatusOr<LoadedModel> model;
        {
          GilReleased nogil;
          model = LoadAnyModel(dir, {.compile = compile});
        }
        return ValueOrThrow(std::move(model), ErrorContext::kFile);
      },
      arg("dir"), arg("compile") = true);
}

}  // namespace graphgc::python
