// models/callbacks/control.h
//
// The callbacks that steer a fit: EarlyStopping (stops it), ReduceLROnPlateau
// (lowers the learning rate) and TerminateOnNaN (fails it on a NaN loss).
#ifndef GRAPHGC_MODELS_CALLBACKS_CONTROL_H_
#define GRAPHGC_MODELS_CALLBACKS_CONTROL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "models/callbacks/callback.h"
#include "runtime/tensor.h"

namespace graphgc {

class CallbackModel;  // models/callbacks/model_access.h

namespace callbacks {

// Modes of the callbacks that watch a metric (EarlyStopping,
// ReduceLROnPlateau): "min" (lower is better),
// "max", or "auto" ("max" when the monitor's name contains "acc", else
// "min", as Keras).

struct EarlyStoppingOptions {
  std::string monitor = "val_loss";
  float min_delta = 0.f;
  int patience = 0;
  std::string mode = "auto";
  bool restore_best_weights = false;
  // Keras's verbose: > 0 prints its messages on stderr (Fit's progress
  // bar's stream) at train end.
  int verbose = 0;
  // Keras's baseline: the wait restarts only on an improvement that also
  // beats it (by min_delta), so without one the fit stops after
  // `patience` epochs.
  std::optional<float> baseline;
  // Keras's start_from_epoch: epochs (0-based) before this one are not
  // watched (a warm-up), so they neither improve nor wait.
  int start_from_epoch = 0;
};

// Keras' EarlyStopping. At every epoch end it reads `monitor` from the
// epoch's logs; a value better than the best so far by more than
// |min_delta| is an improvement (the first value always is) and resets the
// wait, any other epoch adds one to it. Once the wait reaches `patience`
// (and the epoch is not the first), it records stopped_epoch() and calls
// Sequential::StopTraining(): the fit ends after this epoch and its history
// holds the epochs run. With restore_best_weights it keeps a copy of the
// weights of the best epoch and puts them back at train end, whether or not
// training stopped early (Keras 3); without an improvement yet, the weights
// at the first epoch end count as the best. With verbose > 0 it prints, at
// train end, Keras's "Epoch 3: early stopping" when it stopped the fit and
// "Restoring model weights from the end of the best epoch: 2." when it
// restores weights.
//
// A monitor missing from the epoch's logs (a typo, or "val_loss" without
// validation data) is InvalidArgument from OnEpochEnd naming the monitor
// and the keys the logs have, so the fit stops at the first epoch end
// instead of training on without early stopping as Keras does (with a
// warning). Bad options (negative patience, min_delta NaN, a mode other
// than "auto", "min", "max", an empty monitor, a negative start_from_epoch,
// a NaN baseline) are InvalidArgument from Validate(), so Fit refuses them
// before anything happens. One fit at a time (a concurrent second fit is
// refused, see models/callbacks/callback.h).
class EarlyStopping : public Callback {
 public:
  static std::shared_ptr<EarlyStopping> Create(
      EarlyStoppingOptions options = {});
  explicit EarlyStopping(EarlyStoppingOptions options);

  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo& info) override;
  absl::Status OnEpochEnd(int epoch, const Logs& logs) override;
  absl::Status OnTrainEnd(const Logs& logs) override;
  absl::Status Validate() const override;

  const EarlyStoppingOptions& options() const { return options_; }
  // The epoch (0-based) at which the last fit was stopped; 0 if it was not
  // (Keras' stopped_epoch).
  int stopped_epoch() const { return stopped_epoch_; }
  // The best epoch of the last fit and its monitored value (nullopt before
  // any).
  int best_epoch() const { return best_epoch_; }
  std::optional<float> best() const { return best_; }
  // Epochs without improvement so far.
  int wait() const { return wait_; }

 private:
  EarlyStoppingOptions options_;
  std::shared_ptr<CallbackModel> model_;  // during a fit only
  int wait_ = 0;
  int stopped_epoch_ = 0;
  int best_epoch_ = 0;
  std::optional<float> best_;
  std::vector<Tensor> best_weights_;
  bool have_best_weights_ = false;
};

struct ReduceLROnPlateauOptions {
  std::string monitor = "val_loss";
  // Doubles, as Keras's Python floats: the new rate is computed as Keras
  // computes it, so its message prints the same digits.
  double factor = 0.1;
  int patience = 10;
  std::string mode = "auto";
  float min_delta = 1e-4f;
  int cooldown = 0;
  double min_lr = 0.0;
  // Keras's verbose: > 0 prints "\nEpoch 5: ReduceLROnPlateau reducing
  // learning rate to 0.010000000149011612." (the rate as Python prints a
  // float) on stderr at each reduction.
  int verbose = 0;
};

// Keras' ReduceLROnPlateau: at every epoch end, a monitored value better
// than the best by more than min_delta resets the wait; otherwise, outside
// a cooldown, the wait grows, and when it reaches `patience` the model's
// learning rate (Sequential::SetLearningRate, a variable the step reads:
// nothing is rebuilt) becomes max(lr * factor, min_lr) if lr > min_lr, and
// a cooldown of `cooldown` epochs starts (the wait stays 0 during it).
// Unlike Keras the rate is not added to the epoch's logs (they are const
// here); read it with Sequential::learning_rate().
//
// A missing monitor is InvalidArgument naming it and the keys there are,
// as EarlyStopping. Bad options (factor not in [0, 1), negative patience or
// cooldown, min_lr NaN or negative, min_delta NaN, an unknown mode, an
// empty monitor) are InvalidArgument from Validate(). One fit at a time.
class ReduceLROnPlateau : public Callback {
 public:
  static std::shared_ptr<ReduceLROnPlateau> Create(
      ReduceLROnPlateauOptions options = {});
  explicit ReduceLROnPlateau(ReduceLROnPlateauOptions options);

  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo& info) override;
  absl::Status OnEpochEnd(int epoch, const Logs& logs) override;
  absl::Status OnTrainEnd(const Logs& logs) override;
  absl::Status Validate() const override;

  const ReduceLROnPlateauOptions& options() const { return options_; }
  // Times the last fit lowered the rate.
  int reductions() const { return reductions_; }

 private:
  ReduceLROnPlateauOptions options_;
  std::shared_ptr<CallbackModel> model_;  // during a fit only
  bool max_mode_ = false;
  double best_ = 0;
  int wait_ = 0;
  int cooldown_counter_ = 0;
  int reductions_ = 0;
};

// Keras' TerminateOnNaN: stops the fit, with a FailedPrecondition status
// naming the batch, as soon as a batch's loss is NaN or infinite. Without
// it, training goes on as in Keras and the loss simply becomes NaN. One fit
// at a time (a concurrent second fit is refused, see
// models/callbacks/callback.h).
class TerminateOnNaN : public Callback {
 public:
  static std::shared_ptr<TerminateOnNaN> Create();
  absl::Status OnEpochBegin(int epoch) override;
  absl::Status OnBatchEnd(int64_t batch, const Logs& logs) override;

 private:
  int epoch_ = 0;
};

}  // namespace callbacks
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_CALLBACKS_CONTROL_H_
