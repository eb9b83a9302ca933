// models/callbacks/checkpoint.h
//
// ModelCheckpoint: saves the model (or its weights) at epoch ends.
#ifndef GRAPHGC_MODELS_CALLBACKS_CHECKPOINT_H_
#define GRAPHGC_MODELS_CALLBACKS_CHECKPOINT_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/callbacks/callback.h"

namespace graphgc {

class CallbackModel;  // models/callbacks/model_access.h

namespace callbacks {

struct ModelCheckpointOptions {
  std::string filepath;
  std::string monitor = "val_loss";
  bool save_best_only = false;
  bool save_weights_only = false;
  // With save_best_only: "auto" (see below), "min" or "max".
  std::string mode = "auto";
  // Keras's initial_value_threshold: with save_best_only, the best value
  // to beat before the first save (unset: +inf, or -inf in max mode).
  std::optional<float> initial_value_threshold;
  // Keras's verbose: > 0 prints, on stderr before each save, "\nEpoch 1:
  // val_loss improved from inf to 0.69315, saving model to <path>" (with
  // save_best_only; "\nEpoch 2: val_loss did not improve from 0.69315" when
  // it does not save) or "\nEpoch 1: saving model to <path>".
  int verbose = 0;
};

// Keras 3's ModelCheckpoint. At every epoch end it formats `filepath` with
// the epoch (1-based) and the epoch's logs, Python's str.format as Keras
// does: "{epoch}" and "{epoch:02d}" (any "{epoch:0Nd}" or "{epoch:d}"),
// "{val_loss}" (a log value as Python prints a float: its repr) and
// "{val_loss:.2f}" (any "{<key>:.Nf}"); "{{" and "}}" are literal braces.
// Then it saves the model there: Sequential::Save (a directory: config.json,
// model.weights.h5, model.pb, signature.json; models/saving.h), or with
// save_weights_only only the weights file, SaveWeights (models/saving.h):
// the HDF5 file Keras's `save_weights` writes. Parent directories are made.
//
// With save_best_only it saves only when the value of `monitor` in the
// epoch's logs is better than the best so far (initial_value_threshold,
// when set, counts as the first best; NaN never improves): lower, or higher
// in mode "max" or in mode "auto" when the monitor's name contains "acc"
// (EarlyStopping's "auto"); best() is that value.
//
// Create refuses (InvalidArgument) an empty filepath or one with a NUL byte;
// with save_weights_only a filepath not ending in ".weights.h5" (Keras 3
// requires it); without it, one ending in ".h5" (Save writes a directory,
// not an HDF5 file: use save_weights_only for the weights alone); with
// save_best_only an empty monitor or a mode other than "auto", "min" and
// "max". At an epoch end, a malformed placeholder
// ("{epoch", "{}", "{loss:.2x}") or one naming neither "epoch" nor a key of
// the logs is InvalidArgument naming the placeholder and the filepath; with
// save_best_only, a monitor missing from the logs is InvalidArgument naming
// it and the keys there are (as EarlyStopping; Keras only warns). A failed
// save stops the fit with its status, which names the path. One fit at a
// time (a concurrent second fit is refused, see
// models/callbacks/callback.h).
class ModelCheckpoint : public Callback {
 public:
  static absl::StatusOr<std::shared_ptr<ModelCheckpoint>> Create(
      ModelCheckpointOptions options);

  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo& info) override;
  absl::Status OnEpochEnd(int epoch, const Logs& logs) override;
  absl::Status OnTrainEnd(const Logs& logs) override;
  absl::Status Validate() const override;

  const ModelCheckpointOptions& options() const { return options_; }
  // The best monitored value of the last fit with save_best_only (nullopt
  // before any, and without save_best_only).
  std::optional<float> best() const { return best_; }
  // `filepath` formatted for `epoch` (0-based, as the hooks count) and
  // `logs`, or InvalidArgument as above.
  absl::StatusOr<std::string> FormatPath(int epoch, const Logs& logs) const;

 private:
  explicit ModelCheckpoint(ModelCheckpointOptions options);
  ModelCheckpointOptions options_;
  std::shared_ptr<CallbackModel> model_;  // during a fit only
  std::optional<float> best_;
};

}  // namespace callbacks
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_CALLBACKS_CHECKPOINT_H_
