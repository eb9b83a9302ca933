// python/ext/py_callback.h
//
// PyCallback: a Python object with Keras's callback methods (a subclass of
// graphgc.callbacks.Callback) seen by Sequential::Fit as a C++ Callback.
//
// Each hook takes the GIL (Fit runs without it), calls the Python method
// with Keras's arguments (on_epoch_end(epoch, logs) with logs a dict of
// floats, on_batch_begin(batch, logs=None), on_train_begin(logs=None) after
// set_params({"epochs", "steps", "samples", "batch_size", "verbose"})),
// and releases it. Methods the object's class does not override (it
// inherits graphgc.callbacks.Callback's no-op) are not called at all, so a
// callback that only has on_epoch_end costs no GIL round trip per batch.
//
// An exception raised by a method stops the fit (the hook returns
// Aborted); the exception itself is kept and TakeError() hands it to the
// binding, which raises it once Fit has returned: the caller sees the
// callback's own exception, not a translation.
//
// Once the interpreter is exiting (python/ext/gil.h), a hook runs no Python
// and returns Cancelled, which stops the fit.
//
// Ownership: holds a strong reference to the Python object; the destructor
// takes the GIL to drop it, so the last owner may be any thread (once the
// interpreter is exiting, the reference is left instead).
#ifndef GRAPHGC_PYTHON_EXT_PY_CALLBACK_H_
#define GRAPHGC_PYTHON_EXT_PY_CALLBACK_H_

#include <cstdint>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "models/callbacks.h"
#include "pybind11/pybind11.h"

namespace graphgc::python {

class PyCallback : public Callback {
 public:
  // Needs the GIL. `base` is graphgc.callbacks.Callback (the class whose
  // no-op methods are not called).
  PyCallback(pybind11::object target, pybind11::handle base);
  ~PyCallback() override;

  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo& info) override;
  absl::Status OnTrainEnd(const Logs& logs) override;
  absl::Status OnEpochBegin(int epoch) override;
  absl::Status OnEpochEnd(int epoch, const Logs& logs) override;
  absl::Status OnBatchBegin(int64_t batch) override;
  absl::Status OnBatchEnd(int64_t batch, const Logs& logs) override;

  // The exception a method raised during the last fit, if any (needs the
  // GIL); clears it.
  std::optional<pybind11::error_already_set> TakeError();

 private:
  enum Hook {
    kTrainBegin,
    kTrainEnd,
    kEpochBegin,
    kEpochEnd,
    kBatchBegin,
    kBatchEnd,
    kHooks
  };
  // Unless `hook` is not overridden: takes the GIL, makes the arguments
  // with `args` (Python objects are made only under the GIL) and calls the
  // method with them.
  absl::Status Call(Hook hook, absl::FunctionRef<pybind11::tuple()> args);
  // Keeps the exception being handled for TakeError(); the hook's status.
  absl::Status Raised(const char* method, pybind11::error_already_set& e);

  pybind11::object target_;
  bool overridden_[kHooks] = {};
  std::optional<pybind11::error_already_set> error_;
};

}  // namespace graphgc::python

#endif  // GRAPHGC_PYTHON_EXT_PY_CALLBACK_H_
