// models/callbacks.h
//
// Callback: the Keras callback protocol of Sequential::Fit, and the stock
// callbacks (ProgressBar, TerminateOnNaN, EarlyStopping, CSVLogger,
// ModelCheckpoint, ReduceLROnPlateau; TensorBoard comes with the export
// library).
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
// This holds for every callback, the stock ones below and user subclasses
// alike, so none of them needs to be thread-safe. Sequential reuse of one
// callback by several fits is fine. A callback's accessors (TensorBoard's
// train_path(), ProgressBar's Line(), ...) read state its fit writes: call
// them when no fit is using it, or from its hooks.
//
// Logs: batch logs hold "loss" (and "accuracy") of that batch and "size";
// epoch logs hold the epoch's averages weighted by batch size, plus
// "val_loss" / "val_accuracy" with validation data.
#ifndef GRAPHGC_MODELS_CALLBACKS_H_
#define GRAPHGC_MODELS_CALLBACKS_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gc/handle.h"
#include "runtime/tensor.h"

namespace graphgc::proto {
class GraphDef;  // serialize/graph.proto
}  // namespace graphgc::proto

namespace graphgc {

class Sequential;
class EventFileWriter;
class RecordSink;

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

namespace callbacks {

struct ProgressBarOptions {
  FILE* out = stderr;
  // Redraw one line in place (a terminal); false prints the epoch's line
  // once at its end. Unset: decided by isatty(out).
  int redraw = -1;
  // The clock (tests inject one); empty: absl::Now.
  std::function<absl::Time()> clock;
};

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
// at the first epoch end count as the best.
//
// A monitor missing from the epoch's logs (a typo, or "val_loss" without
// validation data) is InvalidArgument from OnEpochEnd naming the monitor
// and the keys the logs have, so the fit stops at the first epoch end
// instead of training on without early stopping as Keras does (with a
// warning). Bad options (negative patience, min_delta NaN, a mode other
// than "auto", "min", "max", an empty monitor) are InvalidArgument from
// Validate(), so Fit refuses them before anything happens. One fit at a
// time (a concurrent second fit is refused, see the top).
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
  const Sequential* model_ = nullptr;  // during a fit only
  int wait_ = 0;
  int stopped_epoch_ = 0;
  int best_epoch_ = 0;
  std::optional<float> best_;
  std::vector<Tensor> best_weights_;
  bool have_best_weights_ = false;
};

// Keras' CSVLogger: writes one row per epoch to `path`, created (or
// truncated) at train begin: the header "epoch,<keys>" with the first
// epoch's log keys sorted, then "<epoch>,<values>", each value as Python
// writes a float (repr: the shortest digits that give the value back,
// "0.10000000149011612" for 0.1f, "9.999999747378752e-06", "nan"), lines ending
// "\r\n" as Python's csv module ends them; a key missing from a later epoch is
// "NA". Rows are flushed every epoch; the file is closed at train end.
//
// Create refuses (InvalidArgument) an empty path or one holding a NUL byte;
// a file that cannot be opened or written stops the fit with a status
// naming the file. One fit at a time (a concurrent second fit is refused,
// see the top).
class CSVLogger : public Callback {
 public:
  static absl::StatusOr<std::shared_ptr<CSVLogger>> Create(std::string path);
  ~CSVLogger() override;

  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo& info) override;
  absl::Status OnEpochEnd(int epoch, const Logs& logs) override;
  absl::Status OnTrainEnd(const Logs& logs) override;

  const std::string& path() const { return path_; }
  // A value as Keras' CSV holds it (Python's repr of the float).
  static std::string FormatValue(float value);

 private:
  explicit CSVLogger(std::string path);
  std::string path_;
  std::unique_ptr<RecordSink> sink_;
  std::vector<std::string> keys_;
  bool wrote_header_ = false;
};

struct ModelCheckpointOptions {
  std::string filepath;
  std::string monitor = "val_loss";
  bool save_best_only = false;
  bool save_weights_only = false;
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
// epoch's logs is better than the best so far (the first value is, NaN
// never is): lower, or higher when the monitor's name contains "acc" (the
// "auto" mode of EarlyStopping, which Keras 3 applies here too); best()
// is that value.
//
// Create refuses (InvalidArgument) an empty filepath or one with a NUL byte;
// with save_weights_only a filepath not ending in ".weights.h5" (Keras 3
// requires it); without it, one ending in ".h5" (Save writes a directory,
// not an HDF5 file: use save_weights_only for the weights alone); with
// save_best_only an empty monitor. At an epoch end, a malformed placeholder
// ("{epoch", "{}", "{loss:.2x}") or one naming neither "epoch" nor a key of
// the logs is InvalidArgument naming the placeholder and the filepath; with
// save_best_only, a monitor missing from the logs is InvalidArgument naming
// it and the keys there are (as EarlyStopping; Keras only warns). A failed
// save stops the fit with its status, which names the path. One fit at a
// time (a concurrent second fit is refused, see the top).
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
  const Sequential* model_ = nullptr;  // during a fit only
  std::optional<float> best_;
};

struct ReduceLROnPlateauOptions {
  std::string monitor = "val_loss";
  float factor = 0.1f;
  int patience = 10;
  std::string mode = "auto";
  float min_delta = 1e-4f;
  int cooldown = 0;
  float min_lr = 0.f;
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
  const Sequential* model_ = nullptr;  // during a fit only
  bool max_mode_ = false;
  double best_ = 0;
  int wait_ = 0;
  int cooldown_counter_ = 0;
  int reductions_ = 0;
};

// Keras 3's progress bar, counting steps (batches):
//   Epoch 1/2
//   32/32 ━━━━━━━━━━━━━━━━━━━━ 0s 2ms/step - accuracy: 0.9100 - loss: 0.2700
// On a terminal the line is redrawn in place after a batch, at most every
// 0.05 s, with the ETA while the epoch runs (` 7/32 ━━━━━━━━━━━━━━━━━━━━ 1s
// 5ms/step - loss: ...`; done cells green, the rest grey, the count bold:
// Keras's ANSI colours), and the epoch's final line replaces it. Otherwise
// (a file, a pipe) only the final line is printed, once per epoch, without
// colours. Time per step leaves out the first step (it includes building
// the step), as Keras's does; values are the epoch's running means, sample-
// weighted, then the epoch-end logs (training keys, then val_ ones, sorted).
// Fit adds one by itself for verbose = 1 (and a line per epoch for
// verbose = 2). One fit at a time (a concurrent second fit is refused, see
// the top).
class ProgressBar : public Callback {
 public:
  static std::shared_ptr<ProgressBar> Create(ProgressBarOptions options = {});
  explicit ProgressBar(ProgressBarOptions options);

  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo& info) override;
  absl::Status OnEpochBegin(int epoch) override;
  absl::Status OnBatchEnd(int64_t batch, const Logs& logs) override;
  absl::Status OnEpochEnd(int epoch, const Logs& logs) override;

  // The line as it would be drawn now, without colours (for tests).
  std::string Line(bool final) const;

 private:
  absl::Time Now() const;
  // The line; `ansi` adds Keras's colours.
  std::string Format(bool final, bool ansi) const;
  // Redraws the line in place, padding over a longer previous one.
  void Draw(bool final);

  ProgressBarOptions options_;
  bool redraw_ = false;
  TrainInfo info_;
  int64_t steps_ = 0;  // batches ended this epoch
  int64_t seen_ = 0;   // samples seen this epoch
  std::map<std::string, double> metric_sums_;
  Logs epoch_logs_;
  absl::Time epoch_start_;
  std::optional<absl::Time> after_first_step_;
  std::optional<absl::Time> last_draw_;
  size_t drawn_width_ = 0;
};

// Keras' TerminateOnNaN: stops the fit, with a FailedPrecondition status
// naming the batch, as soon as a batch's loss is NaN or infinite. Without
// it, training goes on as in Keras and the loss simply becomes NaN. One fit
// at a time (a concurrent second fit is refused, see the top).
class TerminateOnNaN : public Callback {
 public:
  static std::shared_ptr<TerminateOnNaN> Create();
  absl::Status OnEpochBegin(int epoch) override;
  absl::Status OnBatchEnd(int64_t batch, const Logs& logs) override;

 private:
  int epoch_ = 0;
};

struct TensorBoardOptions {
  std::string log_dir = "logs";
  int64_t update_freq = 0;  // 0: per epoch; N: batch_loss every N batches
  bool write_graph = true;
};

// Keras' TensorBoard callback. At train begin it opens
// log_dir/train/events.out.tfevents.<secs>.<host>.<pid>.<n>.v2 (and
// log_dir/validation/... with validation data), writes the file_version
// event and, with write_graph, the model's graph: only the subgraph the
// model reaches (forward, loss, gradients, optimizer updates), exported
// after a MaybeCollect(), with the model's local scope names (see
// ExportOptions::local_scope_names: "dense", not "dense_14", as TensorFlow
// 2 shows a Keras model's function graph) and, as Keras does, the model's
// Keras JSON config (ModelToJson, models/saving.h) as the "keras" summary
// at step 0: a string tensor with plugin_name "graph_keras_model", which
// TensorBoard's Graphs tab draws as the conceptual graph. Scalars are
// simple_value summaries (TensorBoard's scalar plugin reads them as it reads
// Keras's tensor scalars). It then writes "batch_loss" every
// update_freq batches (step: batches so far) and "epoch_loss" /
// "epoch_accuracy" each epoch (step: the epoch), flushing at every epoch end;
// files are closed at train end. It holds strong handles, labelled "TensorBoard
// '<log_dir>'", to what it exported, for as long as it lives. A write error
// stops the fit with its status.
//
// A log directory removed mid-run (someone cleaning logs/ while training) is
// noticed before each write and at every epoch end: like TensorFlow's
// EventsWriter, the callback recreates the directory and goes on in a new
// events file (file_version and graph first), says so on stderr, and counts
// it in files_reopened(); the events written to the removed file are lost.
// If the directory cannot be recreated (its parent is now a regular file,
// say), the fit stops with a status naming the directory.
//
// An empty log_dir (which would put the files in /train at the filesystem
// root) or one holding a NUL byte (which the C library would cut there) is
// InvalidArgument from Validate(), so Fit refuses it before anything is
// written. One fit at a time: a concurrent second fit is refused (see the
// top of this file).
class TensorBoard : public Callback {
 public:
  static std::shared_ptr<TensorBoard> Create(TensorBoardOptions options = {});
  explicit TensorBoard(TensorBoardOptions options);
  ~TensorBoard() override;

  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo& info) override;
  absl::Status OnBatchEnd(int64_t batch, const Logs& logs) override;
  absl::Status OnEpochEnd(int epoch, const Logs& logs) override;
  absl::Status OnTrainEnd(const Logs& logs) override;
  absl::Status Validate() const override;

  const TensorBoardOptions& options() const { return options_; }
  // Paths of the event files of the last fit (empty before any).
  const std::string& train_path() const { return train_path_; }
  const std::string& validation_path() const { return validation_path_; }
  // Nodes in the last graph written.
  int64_t graph_nodes() const { return graph_nodes_; }
  // Events files reopened because their directory was removed mid-run.
  int64_t files_reopened() const { return files_reopened_; }

 private:
  TensorBoardOptions options_;
  std::string owner_;
  std::unique_ptr<EventFileWriter> train_;
  std::unique_ptr<EventFileWriter> validation_;
  std::string train_path_;
  std::string validation_path_;
  std::vector<NodeHandle> exported_;
  // With write_graph, from OnTrainBegin: the graph exported with local
  // scope names, and the model's Keras JSON with the same names.
  std::shared_ptr<const proto::GraphDef> graph_def_;
  std::string keras_config_;
  int64_t graph_nodes_ = 0;
  int64_t batches_ = 0;
  int64_t files_reopened_ = 0;

  // Opens a new events file in `subdir` of log_dir and writes file_version
  // and (with write_graph) the exported graph, whose node count goes to
  // `graph_nodes` when given, and the "keras" config summary.
  absl::StatusOr<std::unique_ptr<EventFileWriter>> Open(
      const std::string& subdir, int64_t* graph_nodes = nullptr) const;
  // Replaces `writer` by a new file when its file was removed.
  absl::Status ReopenIfRemoved(std::unique_ptr<EventFileWriter>& writer,
                               std::string& path, const std::string& subdir);
};

}  // namespace callbacks
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_CALLBACKS_H_
