// The stock C++ callbacks, as _graphgc.CppCallback subclasses with Keras's
// argument names; graphgc.callbacks wraps each in a Python Callback.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "models/callbacks.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/ext/bindings.h"
#include "python/ext/status_exception.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;
using py::arg;

// Keras's update_freq: "epoch", "batch" or a number of batches.
int64_t UpdateFreq(const py::object& freq) {
  if (py::isinstance<py::str>(freq)) {
    std::string s = freq.cast<std::string>();
    if (s == "epoch") return 0;
    if (s == "batch") return 1;
    throw py::value_error(
        "TensorBoard: update_freq must be 'epoch', "
        "'batch' or a number of batches, not '" +
        s + "'");
  }
  int64_t n = freq.cast<int64_t>();
  if (n < 0) {
    throw py::value_error("TensorBoard: update_freq must be >= 0, not " +
                          std::to_string(n));
  }
  return n;
}

}  // namespace

void RegisterCallbacks(py::module_& m) {
  py::class_<Callback, std::shared_ptr<Callback>>(m, "CppCallback");

  py::class_<callbacks::TensorBoard, Callback,
             std::shared_ptr<callbacks::TensorBoard>>(m, "TensorBoard")
      .def(py::init([](std::string log_dir, py::object update_freq,
                       bool write_graph) {
             return callbacks::TensorBoard::Create(
                 {.log_dir = std::move(log_dir),
                  .update_freq = UpdateFreq(update_freq),
                  .write_graph = write_graph});
           }),
           arg("log_dir"), arg("update_freq"), arg("write_graph"))
      .def_property_readonly("train_path", &callbacks::TensorBoard::train_path)
      .def_property_readonly("validation_path",
                             &callbacks::TensorBoard::validation_path)
      .def_property_readonly("graph_nodes",
                             &callbacks::TensorBoard::graph_nodes);

  py::class_<callbacks::EarlyStopping, Callback,
             std::shared_ptr<callbacks::EarlyStopping>>(m, "EarlyStopping")
      .def(py::init([](std::string monitor, float min_delta, int patience,
                       std::string mode, bool restore_best_weights, int verbose,
                       std::optional<float> baseline, int start_from_epoch) {
             return callbacks::EarlyStopping::Create(
                 {.monitor = std::move(monitor),
                  .min_delta = min_delta,
                  .patience = patience,
                  .mode = std::move(mode),
                  .restore_best_weights = restore_best_weights,
                  .verbose = verbose,
                  .baseline = baseline,
                  .start_from_epoch = start_from_epoch});
           }),
           arg("monitor"), arg("min_delta"), arg("patience"), arg("mode"),
           arg("restore_best_weights"), arg("verbose") = 0,
           arg("baseline") = py::none(), arg("start_from_epoch") = 0)
      .def_property_readonly("stopped_epoch",
                             &callbacks::EarlyStopping::stopped_epoch)
      .def_property_readonly("best_epoch",
                             &callbacks::EarlyStopping::best_epoch)
      .def_property_readonly("best", &callbacks::EarlyStopping::best)
      .def_property_readonly("wait", &callbacks::EarlyStopping::wait);

  py::class_<callbacks::ModelCheckpoint, Callback,
             std::shared_ptr<callbacks::ModelCheckpoint>>(m, "ModelCheckpoint")
      .def(py::init(
               [](std::string filepath, std::string monitor,
                  bool save_best_only, bool save_weights_only, std::string mode,
                  std::optional<float> initial_value_threshold, int verbose) {
                 return ValueOrThrow(callbacks::ModelCheckpoint::Create(
                     {.filepath = std::move(filepath),
                      .monitor = std::move(monitor),
                      .save_best_only = save_best_only,
                      .save_weights_only = save_weights_only,
                      .mode = std::move(mode),
                      .initial_value_threshold = initial_value_threshold,
                      .verbose = verbose}));
               }),
           arg("filepath"), arg("monitor"), arg("save_best_only"),
           arg("save_weights_only"), arg("mode") = "auto",
           arg("initial_value_threshold") = py::none(), arg("verbose") = 0)
      .def_property_readonly("best", &callbacks::ModelCheckpoint::best);

  py::class_<callbacks::CSVLogger, Callback,
             std::shared_ptr<callbacks::CSVLogger>>(m, "CSVLogger")
      .def(py::init([](std::string filename) {
             return ValueOrThrow(
                 callbacks::CSVLogger::Create(std::move(filename)),
                 ErrorContext::kFile);
           }),
           arg("filename"))
      .def_property_readonly("filename", &callbacks::CSVLogger::path);

  py::class_<callbacks::ReduceLROnPlateau, Callback,
             std::shared_ptr<callbacks::ReduceLROnPlateau>>(m,
                                                            "ReduceLROnPlateau")
      .def(py::init([](std::string monitor, double factor, int patience,
                       std::string mode, float min_delta, int cooldown,
                       double min_lr, int verbose) {
             return callbacks::ReduceLROnPlateau::Create(
                 {.monitor = std::move(monitor),
                  .factor = factor,
                  .patience = patience,
                  .mode = std::move(mode),
                  .min_delta = min_delta,
                  .cooldown = cooldown,
                  .min_lr = min_lr,
                  .verbose = verbose});
           }),
           arg("monitor"), arg("factor"), arg("patience"), arg("mode"),
           arg("min_delta"), arg("cooldown"), arg("min_lr"), arg("verbose") = 0)
      .def_property_readonly("reductions",
                             &callbacks::ReduceLROnPlateau::reductions);

  py::class_<callbacks::TerminateOnNaN, Callback,
             std::shared_ptr<callbacks::TerminateOnNaN>>(m, "TerminateOnNaN")
      .def(py::init([] { return callbacks::TerminateOnNaN::Create(); }));
}

}  // namespace graphgc::python
