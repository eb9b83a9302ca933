// Keras's file functions beyond save and load_model (model_bindings.cc):
// save_weights / load_weights of a .weights.h5 file, the JSON config both
// ways (to_json, model_from_json), and the load budgets of a config and of
// a model's load_weights, which the .keras reader
// (python/src/graphgc/_saving.py) checks a zip entry's declared size
// against before inflating it. Each releases the GIL while
// C++ works, on a copy of the model handle (as model_bindings.cc).
#include <cstdint>
#include <string>
#include <utility>

#include "models/functional.h"
#include "models/load_weights.h"
#include "models/model_from_json.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/ext/bindings.h"
#include "python/ext/gil.h"
#include "python/ext/status_exception.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;
using py::arg;

// `fn(handle, path)` on a copy of the model handle, without the GIL.
template <typename Model, typename Fn>
void RunOnFile(const Model& model, const std::string& path, Fn fn) {
  Model handle = model;
  absl::Status s;
  {
    GilReleased nogil;
    s = fn(handle, path);
  }
  OkOrThrow(s, ErrorContext::kFile);
}

template <typename Model>
void DefineModelFunctions(py::module_& m) {
  m.def(
      "save_weights",
      [](const Model& model, const std::string& path) {
        RunOnFile(model, path, [](Model& handle, const std::string& p) {
          return SaveWeights(handle, p);
        });
      },
      arg("model"), arg("path"));
  m.def(
      "load_weights",
      [](const Model& model, const std::string& path) {
        RunOnFile(model, path, [](Model& handle, const std::string& p) {
          return LoadWeights(handle, p);
        });
      },
      arg("model"), arg("path"));
  m.def(
      "max_load_weights_file_bytes",
      [](const Model& model) {
        Model handle = model;
        absl::StatusOr<int64_t> bound;
        {
          GilReleased nogil;
          bound = MaxWeightsFileBytes(handle);
        }
        return ValueOrThrow(std::move(bound));
      },
      arg("model"));
  m.def(
      "model_to_json",
      [](const Model& model) {
        Model handle = model;
        absl::StatusOr<std::string> json;
        {
          GilReleased nogil;
          json = ModelToJson(handle);
        }
        return ValueOrThrow(std::move(json));
      },
      arg("model"));
}

}  // namespace

void RegisterSaving(py::module_& m) {
  DefineModelFunctions<Sequential>(m);
  DefineModelFunctions<Functional>(m);
  m.def(
      "model_from_json",
      [](const std::string& json, bool compile) {
        absl::StatusOr<LoadedModel> model;
        {
          GilReleased nogil;
          model = ModelFromJson(json, {.compile = compile}, "model JSON");
        }
        return ValueOrThrow(std::move(model));
      },
      arg("json"), arg("compile") = true);
  m.def(
      "max_weights_file_bytes",
      [](const std::string& json, const std::string& file) {
        absl::StatusOr<ModelConfigSummary> summary;
        {
          GilReleased nogil;
          summary = ParseModelConfig(json, file);
        }
        return ValueOrThrow(std::move(summary), ErrorContext::kFile)
            .max_weights_file_bytes;
      },
      arg("json"), arg("file"));
}

}  // namespace graphgc::python
