// models/fit.h
//
// FitModel: Sequential::Fit on the model's state (models/engine.h), in
// named phases, each a free function below over one FitRun. FitModel calls
// them in this order:
//   1. ValidateAndClaim(): under the model's lock, the options, x, y and
//      validation_data are checked and validation_split splits x and y
//      (SplitForValidation) (nothing else happens on error); after
//      it the model is marked as fitting on this thread (FitRun::running:
//      other threads' calls wait, its own Compile and Fit are refused),
//      stop_training is cleared, FitRun::nodes holds a copy of the compiled
//      nodes and the lock is released (callbacks may call the model).
//   2. StartCallbacks(): after it, FitRun::callbacks lists the progress bar
//      (verbose 1 or 2) then the given callbacks, all claimed for this fit
//      (ClaimCallbacks, held to its end), and OnTrainBegin ran on each.
//   3. PrepareBatches(): after it, the step's feeds (the input and label
//      placeholders), fetches (LogFetchesOf: the logs' nodes) and target (the
//      training op) are built once for every step, and the sample order
//      has one entry per sample.
//   Then, per epoch from initial_epoch, while no stop was asked for
//   (Sequential::StopTraining):
//   4. RunEpoch(): the epoch's batches (FitRun::train_steps: a whole pass,
//      or steps_per_epoch batches continuing the pass; models/epoch_steps.h);
//      at a new pass the order is reset and, with `shuffle`, shuffled from
//      mt19937_64(seed * 0x9E3779B97F4A7C15 + epoch); OnEpochBegin; then
//      per batch RunStep() until the epoch's last batch or a stop asked for
//      in a batch hook; then EpochLogs(): loss and metric averaged over the
//      samples trained, weighted by batch size; then Validate(); then
//      RecordEpoch() appends the epoch's logs to the history; then
//      OnEpochEnd.
//   5. RunStep(): OnBatchBegin; the batch's rows of x and y, and their
//      loss weights (ones without sample_weight or class_weight), gathered
//      into the feeds; a safe point (collector().MaybeCollect(), nothing of the
//      model in flight); one session run of the step (with a learning-rate
//      schedule, fed the step's rate, FitRun::scheduled_rate); the batch's logs
//      ("loss", the metric, "size") added to the epoch's sums; OnBatchEnd.
//   6. Validate(): after the epochs validation_freq picks (ValidatesAfter),
//      with validation_data (or else validation_split's rows), its loss and
//      metrics over validation_steps' batches of validation_batch_size on
//      the inference path (EvaluateOn) added to the epoch's logs as
//      "val_<key>".
//   7. RecordEpoch(): the epoch's number and logs appended to FitRun::history.
//   8. OnTrainEnd with the last epoch's logs; FitModel returns the history.
//
// Callback dispatch (Dispatch) calls one hook on every callback in list
// order and stops at the first error, which the fit returns as it is (the
// steps already run stay run). The fit's own errors name "Fit of '<name>'".
#ifndef GRAPHGC_MODELS_FIT_H_
#define GRAPHGC_MODELS_FIT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/callbacks.h"
#include "models/engine.h"
#include "models/epoch_steps.h"
#include "models/model_options.h"
#include "models/scheduled_learning_rate.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {

class Sequential;  // models/sequential.h: handed to callbacks as is
namespace models_internal {

// Marks this thread's Fit of a model as running, from its construction
// (under the model's lock) until its destruction.
class FitRunning {
 public:
  explicit FitRunning(ModelState& m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(m.mu);
  FitRunning(const FitRunning&) = delete;
  FitRunning& operator=(const FitRunning&) = delete;
  ~FitRunning() ABSL_LOCKS_EXCLUDED(m_.mu);

 private:
  ModelState& m_;
};

// One fit: its arguments and what the phases hand one another.
struct FitRun {
  FitRun(ModelState& state, const Sequential& handle, std::vector<Tensor> x_in,
         std::vector<Tensor> y_in, FitOptions opts)
      : m(state),
        model(handle),
        x(std::move(x_in)),
        y(std::move(y_in)),
        options(std::move(opts)) {}

  // First, so that it is destroyed last: the fit counts as running until
  // everything else of it is gone.
  std::optional<FitRunning> running;
  ModelState& m;
  const Sequential& model;  // what the callbacks are given
  // As given: one tensor per input, one per output (or trained output).
  std::vector<Tensor> x;
  std::vector<Tensor> y;
  const FitOptions options;
  std::string where;    // "Fit of '<name>'"
  ModelData data;       // x, y and the loss weights, checked
  int64_t samples = 0;  // trained on: rows [0, samples) of the data
  // validation_split's held-out rows [samples, samples + val_samples) of
  // the data (0 without a split), read in place.
  int64_t val_samples = 0;
  std::optional<ModelData> validation;  // validation_data, checked
  CompiledNodes nodes;
  // The loss weights are the data's: data.sample_weight (sample_weight,
  // or class_weight's per-sample weights) and validation->sample_weight
  // (validation_sample_weight). validation_split's rows are read from
  // `data` (Keras splits sample_weight with x and y), or from
  // `split_unweighted` (the data without class_weight's weights: Keras
  // leaves that validation unweighted).
  std::optional<ModelData> split_unweighted;
  // Which batches each epoch (and each validation) runs: EpochSteps.
  std::optional<EpochSteps> train_steps;
  std::optional<EpochSteps> val_steps;
  EpochSteps::Span span;  // the current epoch's
  int val_batch_size = 0;
  int64_t val_rows = 0;  // validation_data's rows, or val_samples

  std::vector<std::shared_ptr<Callback>> callbacks;
  CallbackClaims claims;
  // With a learning-rate schedule: each step's rate, fed to rate_read (the
  // learning rate's ReadVariableOp) in the step's own run.
  std::optional<ScheduledRate> scheduled_rate;
  Output rate_read;

  // The sample order of the current epoch, and the step's run arguments.
  std::vector<int64_t> order;
  std::vector<std::pair<Output, Tensor>> feeds;
  std::vector<Output> fetches;
  std::vector<Output> targets;

  // The step's loss nodes (the first of `fetches`) and keys; the current
  // epoch's sums of each over its batches, its metrics' totals (over
  // nodes.metrics, fetched after the losses), and its logs once done.
  LogFetches log_fetches;
  std::vector<double> sums;
  MetricTotals metrics;
  int64_t seen = 0;  // samples trained this epoch
  Logs epoch_logs;

  History history;
};

// Keras's train_validation_split over `samples` rows: the row validation
// starts at, floor(samples * (1 - validation_split)), or InvalidArgument
// naming `where` when the split is not in [0, 1) or leaves either side
// empty (Keras's message). A split of 0 gives `samples`.
absl::StatusOr<int64_t> SplitForValidation(int64_t samples,
                                           double validation_split,
                                           const std::string& where);

// The phases, in FitModel's order (see the top of this file).
absl::Status ValidateAndClaim(FitRun& r);
absl::Status StartCallbacks(FitRun& r);
void PrepareBatches(FitRun& r);
absl::Status RunEpoch(FitRun& r, int epoch);
absl::Status RunStep(FitRun& r, int64_t step);
void EpochLogs(FitRun& r);
absl::Status Validate(FitRun& r, int epoch);
void RecordEpoch(FitRun& r, int epoch);

// Keras's _should_eval: whether the fit validates after `epoch` (0-based).
bool ValidatesAfter(const FitOptions& options, int epoch);

// Runs the phases; `model` is the handle the callbacks are given.
absl::StatusOr<History> FitModel(ModelState& m, const Sequential& model,
                                 const Tensor& x, const Tensor& y,
                                 FitOptions options);
// The list forms: one x per input, one y per output (or trained output).
absl::StatusOr<History> FitModel(ModelState& m, const Sequential& model,
                                 std::vector<Tensor> x, std::vector<Tensor> y,
                                 FitOptions options);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_FIT_H_
