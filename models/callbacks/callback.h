// models/callbacks/callback.h
//
// Callback: the Keras callback protocol of Sequential::Fit, and the claims
// that keep a callback to one fit at a time. The stock callbacks are in
// models/callbacks/logging.h (ProgressBar, CSVLogger, TensorBoard),
// models/callbacks/control.h (EarlyStopping, ReduceLROnPlateau,
// TerminateOnNaN) and models/callbacks/checkpoint.h (ModelCheckpoint), all
// included by models/callbacks.h.
//
// Stopping: a callback stops training as Keras' `model.stop_training = True`
// does with Sequential::StopTraining() on the model OnTrainBegin gives it
// (the fit ends cleanly and returns its history; see models/sequential.h),
// or by returning an error (the fit returns that error).
//
// Fit first claims its callbacks and validates them (ClaimCallbacks below),
// then calls, in order: OnTrainBegin, then per epoch OnEpochBegin, per batch
// OnBatchBegin / OnBatchEnd, OnEpochEnd, and finally OnTrainEnd. A non-OK
// status from any of them stops the fit, which returns that status (the
// weights keep the steps already taken). Callbacks run on Fit's thread; a
// Fit or Compile of the same model asked from a callback is refused with
// FailedPrecondition (models/sequential.h says which calls work there).
//
// Thread safety: a callback object serves one fit at a time. Fit claims
// every callback it is given for its whole run and releases the claims when
// it returns (also on error); a fit started meanwhile on another model with
// one of the same callback objects gets FailedPrecondition ("callback X is
// already in use by a running fit of model 'Y'") before anything happens.
// This holds for every callback, the stock ones and user subclasses
// alike, so none of them needs to be thread-safe. Sequential reuse of one
// callback by several fits is fine. A callback's accessors (TensorBoard's
// train_path(), ProgressBar's Line(), ...) read state its fit writes: call
// them when no fit is using it, or from its hooks.
//
// Logs: batch logs hold "loss" (and "accuracy") of that batch and "size";
// epoch logs hold the epoch's averages weighted by batch size, plus
#ifndef GRAPHGC_MODELS_CALLBACKS_CALLBACK_H_
#define GRAPHGC_MODELS_CALLBACKS_CALLBACK_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graphgc {

class Sequential;

using Logs = std::map<std::string, float>;

// What a fit is about to do.
struct TrainInfo {
  int epochs = 0;
  int64_t samples = 0;
  int64_t steps_per_epoch = 0;
  int batch_size = 0;
  int verbose = 0;
  bool has_validation = false;
};

class Callback {
 public:
  virtual ~Callback() = default;
  // `model` is the model being fit; valid during the fit only (a callback
  // that needs the model's nodes takes handles to them here).
  virtual absl::Status OnTrainBegin(const Sequential& model,
                                    const TrainInfo& info);
  virtual absl::Status OnTrainEnd(const Logs& logs);
  virtual absl::Status OnEpochBegin(int epoch);
  virtual absl::Status OnEpochEnd(int epoch, const Logs& logs);
  virtual absl::Status OnBatchBegin(int64_t batch);
  virtual absl::Status OnBatchEnd(int64_t batch, const Logs& logs);

  // Checks the callback's own settings. Fit calls it on every callback
  // before any hook of any of them; a non-OK status stops the fit before
  // anything happens, and Fit returns it. Default: OK.
  virtual absl::Status Validate() const;
};

// CallbackClaims: the callbacks a running fit holds (see ClaimCallbacks).
// Destroying it releases them. Move-only.
class CallbackClaims {
 public:
  CallbackClaims() = default;
  ~CallbackClaims();
  CallbackClaims(CallbackClaims&& other) noexcept = default;
  CallbackClaims& operator=(CallbackClaims&& other) noexcept;
  CallbackClaims(const CallbackClaims&) = delete;
  CallbackClaims& operator=(const CallbackClaims&) = delete;

 private:
  friend absl::StatusOr<CallbackClaims> ClaimCallbacks(
      const std::vector<std::shared_ptr<Callback>>& callbacks,
      const std::string& model);
  void Release();

  std::vector<std::shared_ptr<Callback>> claimed_;
};

// ClaimCallbacks: what Fit does first. Claims every callback of `callbacks`
// for a fit of the model named `model` (null entries are skipped; one
// listed twice is claimed once), then calls Validate() on each. Returns
// FailedPrecondition "Fit of '<model>': callback <type> is already in use by
// a running fit of model '<other>'" if one is claimed by another running
// fit, or the first Validate() error; either way nothing stays claimed and
// no hook has run. Thread-safe.
absl::StatusOr<CallbackClaims> ClaimCallbacks(
    const std::vector<std::shared_ptr<Callback>>& callbacks,
    const std::string& model);

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_CALLBACKS_CALLBACK_H_
