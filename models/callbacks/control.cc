#include "models/callbacks/control.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/callbacks/logging.h"
#include "models/callbacks/model_access.h"
#include "models/callbacks/monitor.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace callbacks {

std::shared_ptr<TerminateOnNaN> TerminateOnNaN::Create() {
  return std::make_shared<TerminateOnNaN>();
}

absl::Status TerminateOnNaN::OnEpochBegin(int epoch) {
  epoch_ = epoch;
  return absl::OkStatus();
}

absl::Status TerminateOnNaN::OnBatchEnd(int64_t batch, const Logs& logs) {
  auto it = logs.find("loss");
  if (it != logs.end() && !std::isfinite(it->second)) {
    return absl::FailedPreconditionError(
        absl::StrCat("TerminateOnNaN: loss is ", it->second, " at batch ",
                     batch, " of epoch ", epoch_ + 1, "; training stopped"));
  }
  return absl::OkStatus();
}

std::shared_ptr<EarlyStopping> EarlyStopping::Create(
    EarlyStoppingOptions options) {
  return std::make_shared<EarlyStopping>(std::move(options));
}

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)) {}

absl::Status EarlyStopping::Validate() const {
  GG_RETURN_IF_ERROR(
      CheckMonitorAndMode("EarlyStopping", options_.monitor, options_.mode));
  if (options_.patience < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EarlyStopping: patience must be >= 0, got ", options_.patience));
  }
  if (std::isnan(options_.min_delta)) {
    return absl::InvalidArgumentError("EarlyStopping: min_delta is NaN");
  }
  if (options_.start_from_epoch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("EarlyStopping: start_from_epoch must be >= 0, got ",
                     options_.start_from_epoch));
  }
  if (options_.baseline.has_value() && std::isnan(*options_.baseline)) {
    return absl::InvalidArgumentError("EarlyStopping: baseline is NaN");
  }
  return absl::OkStatus();
}

absl::Status EarlyStopping::OnTrainBegin(const Sequential& model,
                                         const TrainInfo&) {
  GG_RETURN_IF_ERROR(Validate());  // for callers other than Fit
  model_ = CallbackModelOf(model);
  wait_ = 0;
  stopped_epoch_ = 0;
  best_epoch_ = 0;
  best_.reset();
  best_weights_.clear();
  have_best_weights_ = false;
  return absl::OkStatus();
}

absl::Status EarlyStopping::OnEpochEnd(int epoch, const Logs& logs) {
  GG_ASSIGN_OR_RETURN(
      const float current,
      Monitored("EarlyStopping", options_.monitor, epoch, logs));
  if (model_ == nullptr) {
    return absl::FailedPreconditionError(
        "EarlyStopping: OnEpochEnd before OnTrainBegin");
  }
  if (epoch < options_.start_from_epoch) return absl::OkStatus();  // warm-up
  if (options_.restore_best_weights && !have_best_weights_) {
    // Never improved yet: the current weights count as the best.
    best_weights_ = model_->GetWeights();
    have_best_weights_ = true;
    best_epoch_ = epoch;
  }
  ++wait_;
  // Keras: monitor_op(current - min_delta, best), min_delta = |min_delta|
  // negated in min mode; the first value always improves.
  const double min_delta = std::fabs(static_cast<double>(options_.min_delta));
  const MonitorMode mode = ResolveMode(options_.mode, options_.monitor);
  const bool improved =
      !best_.has_value() ||
      Improves(current, *best_, min_delta, mode, DeltaOn::kCurrent);
  if (improved) {
    best_ = current;
    best_epoch_ = epoch;
    if (options_.restore_best_weights) {
      best_weights_ = model_->GetWeights();
      have_best_weights_ = true;
    }
    // Keras restarts the wait only on beating the baseline too.
    if (!options_.baseline.has_value() ||
        Improves(current, *options_.baseline, min_delta, mode,
                 DeltaOn::kCurrent)) {
      wait_ = 0;
    }
    return absl::OkStatus();
  }
  if (wait_ >= options_.patience && epoch > 0) {
    stopped_epoch_ = epoch;
    model_->StopTraining();
  }
  return absl::OkStatus();
}

absl::Status EarlyStopping::OnTrainEnd(const Logs&) {
  const std::shared_ptr<CallbackModel> model = std::move(model_);
  if (stopped_epoch_ > 0 && options_.verbose > 0) {
    PrintMessage(
        absl::StrCat("Epoch ", stopped_epoch_ + 1, ": early stopping"));
  }
  if (!options_.restore_best_weights || !have_best_weights_ ||
      model == nullptr) {
    return absl::OkStatus();
  }
  if (options_.verbose > 0) {
    PrintMessage(
        absl::StrCat("Restoring model weights from the end of the best epoch: ",
                     best_epoch_ + 1, "."));
  }
  if (best_weights_.empty()) {
    return absl::InternalError(
        "EarlyStopping: the best epoch's weights could not be read, so they "
        "cannot be restored");
  }
  absl::Status s = model->SetWeights(best_weights_);
  if (!s.ok()) {
    return Annotate(
        s, absl::StrCat("EarlyStopping: restoring the weights of epoch ",
                        best_epoch_ + 1));
  }
  return absl::OkStatus();
}

std::shared_ptr<ReduceLROnPlateau> ReduceLROnPlateau::Create(
    ReduceLROnPlateauOptions options) {
  return std::make_shared<ReduceLROnPlateau>(std::move(options));
}

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions options)
    : options_(std::move(options)) {}

absl::Status ReduceLROnPlateau::Validate() const {
  const std::string who = "ReduceLROnPlateau";
  GG_RETURN_IF_ERROR(CheckMonitorAndMode(who, options_.monitor, options_.mode));
  if (!(options_.factor >= 0.f && options_.factor < 1.f)) {
    return absl::InvalidArgumentError(absl::StrCat(
        who,
        ": factor must be in [0, 1) (Keras: a factor >= 1.0 is not "
        "supported), got ",
        options_.factor));
  }
  if (options_.patience < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(who, ": patience must be >= 0, got ", options_.patience));
  }
  if (options_.cooldown < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(who, ": cooldown must be >= 0, got ", options_.cooldown));
  }
  if (!(options_.min_lr >= 0.f) || std::isinf(options_.min_lr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": min_lr must be finite and >= 0, got ", options_.min_lr));
  }
  if (std::isnan(options_.min_delta)) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": min_delta is NaN"));
  }
  return absl::OkStatus();
}

absl::Status ReduceLROnPlateau::OnTrainBegin(const Sequential& model,
                                             const TrainInfo&) {
  GG_RETURN_IF_ERROR(Validate());  // for callers other than Fit
  model_ = CallbackModelOf(model);
  max_mode_ = ResolveMode(options_.mode, options_.monitor) == MonitorMode::kMax;
  best_ = max_mode_ ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  wait_ = 0;
  cooldown_counter_ = 0;
  reductions_ = 0;
  return absl::OkStatus();
}

absl::Status ReduceLROnPlateau::OnEpochEnd(int epoch, const Logs& logs) {
  GG_ASSIGN_OR_RETURN(
      const float value,
      Monitored("ReduceLROnPlateau", options_.monitor, epoch, logs));
  if (model_ == nullptr) {
    return absl::FailedPreconditionError(
        "ReduceLROnPlateau: OnEpochEnd before OnTrainBegin");
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    wait_ = 0;
  }
  // Keras: current < best - min_delta (current > best + min_delta in max
  // mode), min_delta as given.
  if (Improves(value, best_, options_.min_delta,
               max_mode_ ? MonitorMode::kMax : MonitorMode::kMin,
               DeltaOn::kBest)) {
    best_ = value;
    wait_ = 0;
    return absl::OkStatus();
  }
  if (cooldown_counter_ > 0) return absl::OkStatus();
  ++wait_;
  if (wait_ < options_.patience) return absl::OkStatus();
  GG_ASSIGN_OR_RETURN(const float old_lr, model_->learning_rate());
  if (old_lr > options_.min_lr) {
    // In doubles, as Keras's Python floats: the message shows this value.
    const double new_lr = std::max(
        static_cast<double>(old_lr) * options_.factor, options_.min_lr);
    GG_RETURN_IF_ERROR(model_->SetLearningRate(static_cast<float>(new_lr)));
    if (options_.verbose > 0) {
      PrintMessage(
          absl::StrCat("\nEpoch ", epoch + 1,
                       ": ReduceLROnPlateau reducing learning rate to ",
                       CSVLogger::PythonRepr(new_lr), "."));
    }
    ++reductions_;
    cooldown_counter_ = options_.cooldown;
    wait_ = 0;
  }
  return absl::OkStatus();
}

absl::Status ReduceLROnPlateau::OnTrainEnd(const Logs&) {
  model_ = nullptr;
  return absl::OkStatus();
}

}  // namespace callbacks
}  // namespace graphgc
