// models/sequential.h
//
// Sequential: a Keras-style stack of layers on a graph (the default graph
// unless told otherwise), as a copyable handle: a copy is the same model.
//
// Create() validates the stack (every layer's shape against its input's)
// and builds the layers it uses for the first time plus the model's forward
// nodes: the inference path that Evaluate and Predict run and, only when a
// layer behaves otherwise in training (Dropout, BatchNormalization), a
// second, training path that Fit's step runs (with the moving-statistics
// updates). A model of Dense layers has one path: its step has no extra
// node. Compile() builds, once, the training
// step as graph nodes: the loss, the metrics, the gradients and the
// optimizer's updates (under the model's name scope, "sequential_3/...").
// Fit() runs that step through the model's session, batch by batch, calling
// the graph's collector().MaybeCollect() before each step.
//
// Safe points: Create, Compile, Fit, Evaluate, Predict and SetWeights call
// the graph's collector().MaybeCollect() on entry, before taking the model's
// lock, so a program that only builds and drops models (or predicts with them)
// is collected too, not only one that trains.
//
// Ownership: the model holds its nodes with handles labelled
// "Sequential '<name>'"; its layers hold their variables. Dropping the last
// copy of a model orphans everything only it reached (the next collection
// sweeps it); layers shared with other models keep their variables.
//
// Bad input gets a status saying what and where, and leaves the model and
// its weights exactly as they were. Sizes are checked before anything is
// allocated: a tensor whose size overflows is InvalidArgument, one larger
// than MaxTensorBytes() (by default physical memory), or whose allocation
// fails, is ResourceExhausted; no call aborts on them.
//
// Weights never share a buffer with the caller: GetWeights returns copies
// and SetWeights copies what it is given, so editing a tensor on either side
// (mutable_data) never changes the model, and training never changes a
// tensor already returned.
//
// Moved-from models: every method returning a Status or StatusOr returns
// FailedPrecondition ("the model was moved from"); name() is "", layers(),
// GetWeights() and GraphRoots() are empty, compiled() is false, and graph(),
// which has nothing to return, stops the process with that message.
//
// Thread safety: different models may be used from different threads at
// once; calls on one model are serialised by the model: a call from another
// thread waits while one runs, including a whole Fit. The model's lock is
// not recursive and is never held while a callback runs.
//
// Calls from a callback during the model's own Fit (on Fit's thread, between
// steps): Evaluate, Predict, GetWeights, SetWeights, compiled(), GraphRoots()
// and the accessors work (SetWeights takes effect from the next step);
// Compile and Fit are refused with FailedPrecondition and change nothing, and
// the fit goes on.
#ifndef GRAPHGC_MODELS_SEQUENTIAL_H_
#define GRAPHGC_MODELS_SEQUENTIAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gc/handle.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/model_options.h"
#include "models/optimizers.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {

namespace models_internal {
struct ModelState;
struct SavingAccess;
}  // namespace models_internal

class Sequential {
 public:
  // Validates the whole stack before building anything: an empty or
  // moved-from layer, bad layer options, a layer of another graph or built
  // for another input shape, a layer that cannot take its input's shape
  // (named with both shapes) is InvalidArgument; a Dense kernel too large to
  // count is InvalidArgument and one larger than MaxTensorBytes() is
  // ResourceExhausted.
  static absl::StatusOr<Sequential> Create(std::vector<Layer> layers,
                                           SequentialOptions options = {});

  // Builds the training step. A model whose output is not (None, units) is
  // refused (InvalidArgument). Refuses (InvalidArgument, naming the option
  // and its value, the model unchanged) optimizer options that can only make
  // NaN weights: Adam needs learning_rate finite and >= 0, beta_1 and beta_2
  // in [0, 1), epsilon finite and > 0; SGD needs learning_rate finite and
  // >= 0, momentum in [0, 1]. A later valid Compile works. From a callback
  // of the model's own Fit: FailedPrecondition.
  absl::Status Compile(CompileOptions options);
  // x and y with no samples, or validation_data with none, are
  // InvalidArgument (as Keras). From a callback of the model's own Fit:
  // FailedPrecondition.
  absl::StatusOr<History> Fit(const Tensor& x, const Tensor& y,
                              FitOptions options = {});
  // Loss and metrics over (x, y), weighted by batch size. No samples:
  // InvalidArgument (a mean over nothing is no loss). `verbose` as Keras's:
  // 0 silent, 1 Fit's progress bar over the steps with the loss and
  // metrics, 2 its one final line ("4/4 - 0s - 2ms/step - loss: ..."), on
  // stderr; else InvalidArgument.
  absl::StatusOr<std::map<std::string, float>> Evaluate(const Tensor& x,
                                                        const Tensor& y,
                                                        int batch_size = 32,
                                                        int verbose = 0);
  // The same with Keras's sample_weight: float [samples], each sample's
  // loss scaled by its weight (metrics unweighted, as Keras's `metrics`).
  absl::StatusOr<std::map<std::string, float>> Evaluate(
      const Tensor& x, const Tensor& y, const Tensor& sample_weight,
      int batch_size = 32, int verbose = 0);
  // The model's outputs, [samples, units] (or [samples, <the last layer's
  // output shape>]), from the inference path. No samples: an empty
  // [0, units] tensor (as Keras' empty array). A result larger than memory is
  // refused before anything is computed. `verbose` as Evaluate's (the bar
  // without metrics).
  absl::StatusOr<Tensor> Predict(const Tensor& x, int batch_size = 32,
                                 int verbose = 0);

  // Every layer's weights in layer order and Keras's order within a layer
  // (Dense, Conv2D: kernel, bias; BatchNormalization: gamma, beta,
  // moving_mean, moving_variance), as copies the caller owns (see above).
  // Empty if they cannot be read or copied.
  std::vector<Tensor> GetWeights() const;
  // Sets every weight from copies of `weights`, all or none.
  absl::Status SetWeights(const std::vector<Tensor>& weights);

  // The optimizer's learning rate: a float scalar variable Compile makes
  // (under "<name>/Adam/learning_rate" or ".../SGD/learning_rate"), which
  // every training step reads. SetLearningRate assigns it: the next step
  // uses the new rate, and nothing is built or rebuilt (no node is added,
  // no step plan changes). A rate that is NaN, infinite or negative is
  // InvalidArgument, as Compile refuses it, and the rate stays as it was.
  // Before Compile: FailedPrecondition. Both work from a callback of the
  // model's own Fit (ReduceLROnPlateau uses them), taking effect from the
  // next step. A later Compile starts again from its optimizer's rate.
  //
  // With a learning_rate_schedule (models/learning_rate_schedule.h), Fit sets
  // the rate before every step; learning_rate() is the schedule's rate at
  // iterations() (Keras's optimizer.learning_rate) and SetLearningRate is
  // FailedPrecondition with Keras's message.
  absl::StatusOr<float> learning_rate() const;
  absl::Status SetLearningRate(float learning_rate);

  // Keras's optimizer.iterations: the training steps the compiled optimizer
  // has taken (an int64 variable every step adds 1 to; 0 after Compile).
  // Before Compile: FailedPrecondition.
  absl::StatusOr<int64_t> iterations() const;

  // Keras's `model.stop_training = True`: asks the running Fit to stop. Fit
  // checks after every batch and after every epoch: a stop asked for in a
  // batch hook ends that epoch after the batch (the epoch's validation,
  // OnEpochEnd and history entry still happen, its logs averaging the
  // batches run), one asked for in OnEpochEnd ends the fit before the next
  // epoch; OnTrainEnd runs either way and Fit returns the history of the
  // epochs run (history.epoch.size() of them). Every Fit clears the request
  // when it starts, so a call while no fit runs has no effect. Thread-safe
  // and never waits: a callback (copy the model handle it is given: a copy
  // is the same model) or another thread may call it.
  void StopTraining();
  // Whether a stop was asked for since the last Fit started.
  bool stop_training() const;

  // Keras's summary table (its Sequential layout, 65 columns): "Model:
  // \"name\"", then one row per layer after the Input, "name (Type)",
  // its output shape "(None, 6, 6, 8)" and its parameter count, then the
  // total, trainable and non-trainable (BatchNormalization's moving
  // statistics) parameter counts. Lines carry no trailing spaces; a field
  // too long for its column continues on the next line. "" when moved from.
  std::string Summary() const;

  const std::string& name() const;
  Graph& graph() const;
  const std::vector<Layer>& layers() const;
  bool compiled() const;

  // The nodes that stand for the whole model (training step, loss,
  // metrics, predictions, inputs): everything the model reaches is
  // reachable from them. Exports and the TensorBoard callback use these.
  std::vector<NodeHandle> GraphRoots() const;

  // Writes the model to the directory `dir` (created if missing): its
  // architecture and compile settings (config.json), its weights
  // (model.weights.h5) and a frozen inference graph (model.pb with
  // signature.json); see models/saving.h for the format and LoadModel.
  // Atomic: `dir` ends up holding the whole new model or, on failure, what
  // it held before. An empty `dir`, one with a NUL byte, or an existing
  // `dir` holding other files than these four is refused. Works from a
  // callback of the model's own Fit (it reads the weights between steps).
  absl::Status Save(const std::string& dir) const;

 private:
  friend struct models_internal::SavingAccess;  // models/saving.cc
  friend class Functional;  // the same engine (models/functional.h)
  explicit Sequential(std::shared_ptr<models_internal::ModelState> state)
      : state_(std::move(state)) {}
  std::shared_ptr<models_internal::ModelState> state_;
};

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SEQUENTIAL_H_
