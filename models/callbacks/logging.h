// models/callbacks/logging.h
//
// The logging callbacks: ProgressBar (the Keras progress bar Fit shows with
// verbose = 1), CSVLogger and TensorBoard. They read the fit's logs and
// write them out; none changes the fit.
#ifndef GRAPHGC_MODELS_CALLBACKS_LOGGING_H_
#define GRAPHGC_MODELS_CALLBACKS_LOGGING_H_

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
#include "models/callbacks/callback.h"

namespace graphgc::proto {
class GraphDef;  // serialize/graph.proto
}  // namespace graphgc::proto

namespace graphgc {

class EventFileWriter;
class RecordSink;

namespace callbacks {

struct ProgressBarOptions {
  FILE* out = stderr;
  // Redraw one line in place (a terminal); false prints the epoch's line
  // once at its end. Unset: decided by isatty(out).
  int redraw = -1;
  // The clock (tests inject one); empty: absl::Now.
  std::function<absl::Time()> clock;
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
// Fit adds one by itself for verbose = 1 and for verbose = 2, which
// prints Keras 3's verbose=2 line once per epoch instead:
//   32/32 - 0s - 2ms/step - accuracy: 0.9100 - loss: 0.2700
// Evaluate and Predict draw the same bar outside a fit (BeginRun): one run
// of steps, without an "Epoch" line, as Keras's ProgbarLogger does in
// evaluate and predict. One fit at a time (a concurrent second fit is
// refused, see models/callbacks/callback.h).
class ProgressBar : public Callback {
 public:
  static std::shared_ptr<ProgressBar> Create(ProgressBarOptions options = {});
  explicit ProgressBar(ProgressBarOptions options);

  absl::Status OnTrainBegin(const Sequential& model,
                            const TrainInfo& info) override;
  absl::Status OnEpochBegin(int epoch) override;
  absl::Status OnBatchEnd(int64_t batch, const Logs& logs) override;
  absl::Status OnEpochEnd(int epoch, const Logs& logs) override;

  // Starts a run of `steps` steps outside a fit (Evaluate's, Predict's) at
  // `verbose` 1 or 2, printing nothing yet: then OnBatchEnd after each
  // batch and OnEpochEnd with the final logs (none for Predict) end it.
  void BeginRun(int64_t steps, int verbose);

  // The line as it would be drawn now, without colours (for tests).
  std::string Line(bool final) const;

 private:
  absl::Time Now() const;
  // Clears the counts of the epoch (or run) that starts now.
  void Reset();
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
// see models/callbacks/callback.h).
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
  // Python's repr of a double ("0.010000000149011612", "1e-05", "inf").
  static std::string PythonRepr(double value);

 private:
  explicit CSVLogger(std::string path);
  std::string path_;
  std::unique_ptr<RecordSink> sink_;
  std::vector<std::string> keys_;
  bool wrote_header_ = false;
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
// written. One fit at a time: a concurrent second fit is refused (see
// models/callbacks/callback.h).
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

#endif  // GRAPHGC_MODELS_CALLBACKS_LOGGING_H_
