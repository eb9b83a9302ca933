#include "python/ext/py_callback.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "python/ext/gil.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;

// What each hook calls, and the older name whose override also counts
// (Keras's Callback.on_train_batch_end calls on_batch_end).
constexpr const char* kMethodNames[] = {
    "on_train_begin", "on_train_end",         "on_epoch_begin",
    "on_epoch_end",   "on_train_batch_begin", "on_train_batch_end",
};
constexpr const char* kAliasNames[] = {
    nullptr, nullptr, nullptr, nullptr, "on_batch_begin", "on_batch_end",
};

bool Overrides(py::handle type, py::handle base, const char* name) {
  py::object mine = py::getattr(type, name, py::none());
  py::object inherited = py::getattr(base, name, py::none());
  return !mine.is_none() && !mine.is(inherited);
}

py::dict LogsToDict(const Logs& logs) {
  py::dict out;
  for (const auto& [key, value] : logs) out[py::str(key)] = value;
  return out;
}

// A hook's status once the interpreter is exiting: it stops the fit.
absl::Status Exiting() {
  return absl::CancelledError(
      "the Python interpreter is exiting: the fit stops");
}

}  // namespace

PyCallback::PyCallback(py::object target, py::handle base)
    : target_(std::move(target)) {
  py::handle type = py::type::of(target_);
  for (int hook = 0; hook < kHooks; ++hook) {
    overridden_[hook] = Overrides(type, base, kMethodNames[hook]) ||
                        (kAliasNames[hook] != nullptr &&
                         Overrides(type, base, kAliasNames[hook]));
  }
}

PyCallback::~PyCallback() {
  PythonCall python;
  if (!python.entered()) {
    // The interpreter is exiting: the references are left, not dropped.
    target_.release();
    if (error_.has_value()) new py::error_already_set(*std::move(error_));
    return;
  }
  error_.reset();
  target_ = py::object();
}

absl::Status PyCallback::Raised(const char* method, py::error_already_set& e) {
  std::string what = e.what();
  error_.emplace(std::move(e));
  return absl::AbortedError(
      absl::StrCat("callback ", method, " raised ", what));
}

absl::Status PyCallback::Call(Hook hook, absl::FunctionRef<py::tuple()> args) {
  if (!overridden_[hook]) return absl::OkStatus();
  PythonCall python;
  if (!python.entered()) return Exiting();
  if (error_.has_value()) return absl::AbortedError("a callback raised");
  try {
    target_.attr(kMethodNames[hook])(*args());
  } catch (py::error_already_set& e) {
    return Raised(kMethodNames[hook], e);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("callback ", kMethodNames[hook], ": ", e.what()));
  }
  return absl::OkStatus();
}

absl::Status PyCallback::OnTrainBegin(const Sequential& /*model*/,
                                      const TrainInfo& info) {
  {
    // Keras's callback.params, for every hook of the fit to read.
    PythonCall python;
    if (!python.entered()) return Exiting();
    error_.reset();
    py::dict params;
    params["epochs"] = info.epochs;
    params["steps"] = info.steps_per_epoch;
    params["samples"] = info.samples;
    params["batch_size"] = info.batch_size;
    params["verbose"] = info.verbose;
    try {
      target_.attr("set_params")(params);
    } catch (py::error_already_set& e) {
      return Raised("set_params", e);
    }
  }
  return Call(kTrainBegin, [] { return py::make_tuple(py::none()); });
}

absl::Status PyCallback::OnTrainEnd(const Logs& logs) {
  return Call(kTrainEnd, [&] { return py::make_tuple(LogsToDict(logs)); });
}

absl::Status PyCallback::OnEpochBegin(int epoch) {
  return Call(kEpochBegin, [&] { return py::make_tuple(epoch, py::none()); });
}

absl::Status PyCallback::OnEpochEnd(int epoch, const Logs& logs) {
  return Call(kEpochEnd,
              [&] { return py::make_tuple(epoch, LogsToDict(logs)); });
}

absl::Status PyCallback::OnBatchBegin(int64_t batch) {
  return Call(kBatchBegin, [&] { return py::make_tuple(batch, py::none()); });
}

absl::Status PyCallback::OnBatchEnd(int64_t batch, const Logs& logs) {
  return Call(kBatchEnd,
              [&] { return py::make_tuple(batch, LogsToDict(logs)); });
}

std::optional<py::error_already_set> PyCallback::TakeError() {
  std::optional<py::error_already_set> out = std::move(error_);
  error_.reset();
  return out;
}

}  // namespace graphgc::python
