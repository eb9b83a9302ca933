// models/engine.h
//
// The training engine: how a model (a ModelGraph, models/model_graph.h) is
// built, compiled, evaluated and run. Private to models/. Sequential is a
// handle on a ModelState that BuildModel made from its linear graph; every
// model shape is the same engine with another graph builder.
//
//   BuildModel:    the layers' builds and the forward paths (inference, and
//                  training when a layer behaves otherwise in training).
//   CompileModel:  the training step (loss, metrics: models/training.h;
//                  gradients; updates: models/optimizer_registry.h) and
//                  Evaluate's loss on the inference path.
//   EvaluateModel, PredictModel: batches over the inference path.
//   FitModel:      models/fit.h.
//
// A model has one or more inputs and outputs: one placeholder per input
// and, once compiled, one label placeholder and one loss per trained output
// (OutputNodes, models/model_state.h); the total loss is each trained
// output's loss times its weight, summed. Every trained output's loss reads
// one float [batch] sample_weight placeholder (ModelState::sample_weight),
// fed each run: the data's per-sample weights, or ones. The data of several
// inputs and outputs is checked and held as models/model_data.h's
// ModelData.
//
// Locking: the ModelState's lock (`mu`) is taken with ModelCall, which also
// waits for another thread's Fit; it is never held across a user callback.
#ifndef GRAPHGC_MODELS_ENGINE_H_
#define GRAPHGC_MODELS_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gc/handle.h"
#include "models/callbacks.h"
#include "models/layer_state.h"
#include "models/model_data.h"
#include "models/model_graph.h"
#include "models/model_options.h"
#include "models/model_state.h"
#include "models/optimizer_registry.h"
#include "models/training.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "util/mutex.h"

namespace graphgc {

namespace models_internal {

// What training and evaluating read of a compiled model, copied under the
// model's lock, so that a Fit runs on it without the lock.
struct CompiledNodes {
  LabelKind label_kind = LabelKind::kSparse;
  Output labels;
  Output sample_weight;  // fed every run: ones without weights
  Output loss;
  Output eval_loss;
  Output train_op;
  // Each trained output's nodes; `label_kind` and `labels` above are the
  // first one's, `loss` and `eval_loss` the totals.
  std::vector<OutputNodes> outputs;
  // Every output's metrics, in output order (AllMetrics): of the training
  // path and of the inference path.
  std::vector<MetricNode> metrics;
  std::vector<MetricNode> eval_metrics;
};

// The metrics of every output in `outputs`, in order.
std::vector<MetricNode> AllMetrics(const std::vector<OutputNodes>& outputs,
                                   bool training);

// The loss nodes whose values make the logs of a training step
// (`training`) or of an evaluation, and each one's key, as Keras 3 names
// them: "loss" (the total) first; with several trained outputs each one's
// unweighted loss "<output>_loss". The metrics follow them in the logs
// (CompiledNodes::metrics, summed with MetricTotals: "accuracy", or
// "<output>_accuracy" in a model of several outputs).
struct LogFetches {
  std::vector<Output> nodes;
  std::vector<std::string> keys;
};
LogFetches LogFetchesOf(const CompiledNodes& c, bool training);

CompiledNodes CompiledNodesOf(const ModelState& m)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(m.mu);

// What BuildModel needs besides the graph of layer calls.
struct BuildOptions {
  std::string name;          // empty: `default_name`, uniqued in the graph
  std::string default_name;  // "sequential"
  std::string class_name;    // "Sequential": the owner label's prefix
  int intra_op_threads = 0;  // SessionOptions's: 0 the process's count
  std::string where;         // "Sequential::Create", prefixing errors
};

// Checks `model` (CheckModelGraph, then every layer with CheckLayer), then
// reserves the model's scope, builds the layers it uses for the first time
// (BuildLayer) and the forward paths (ApplyLayer, in call order; the
// inference path first). `layers` is what the model lists as its layers.
absl::StatusOr<std::shared_ptr<ModelState>> BuildModel(
    const ModelGraph& model, std::vector<Layer> layers, Graph& graph,
    const BuildOptions& options);

// Sequential::Compile, Evaluate and Predict on the model's state: each
// reaches a safe point, then takes the model's lock (ModelCall).
absl::Status CompileModel(ModelState& m, CompileOptions options);
// With `sample_weight` (float [samples]), each sample's loss is scaled by
// its weight (metrics stay unweighted, as Keras's `metrics`). `verbose`:
// 0 silent, 1 Fit's progress bar over the steps (callbacks::ProgressBar,
// on stderr) with the loss and metrics, 2 its one final line; anything
// else is InvalidArgument. Predict's bar has no metrics.
absl::StatusOr<std::map<std::string, float>> EvaluateModel(
    ModelState& m, const Tensor& x, const Tensor& y, int batch_size,
    std::optional<Tensor> sample_weight = std::nullopt, int verbose = 0);
absl::StatusOr<Tensor> PredictModel(ModelState& m, const Tensor& x,
                                    int batch_size, int verbose = 0);
// The list forms (Functional's): one x per input, one y per output (or per
// trained output); Predict gives one tensor per output.
absl::StatusOr<std::map<std::string, float>> EvaluateModel(
    ModelState& m, std::vector<Tensor> xs, std::vector<Tensor> ys,
    int batch_size, std::optional<Tensor> sample_weight = std::nullopt,
    int verbose = 0);
absl::StatusOr<std::vector<Tensor>> PredictModel(ModelState& m,
                                                 std::vector<Tensor> xs,
                                                 int batch_size,
                                                 int verbose = 0);

// Loss and metrics over `data`, already checked and with samples, without
// training; weighted by batch size. Evaluate and Fit's validation. With
// `count` >= 0, over rows [first_row, first_row + count) only (in range,
// count > 0: validation_split's held-out rows, read in place). The loss
// weighs each row by its entry of data.sample_weight when given. With
// `progress`, each batch's logs go to its OnBatchEnd and the result to its
// OnEpochEnd (Evaluate's bar; the caller began its run).
absl::StatusOr<Logs> EvaluateOn(ModelState& m, const CompiledNodes& c,
                                const ModelData& data, int batch_size,
                                int64_t first_row = 0, int64_t count = -1,
                                callbacks::ProgressBar* progress = nullptr);

// The feeds of a batch of `data`: every input, then every trained output's
// labels (c.outputs; none when data.labels is empty), then, with labels,
// the loss weights (data.sample_weight's rows, or ones). FeedSlots lists
// those nodes once, with empty tensors; GatherBatchInto puts a batch's
// `rows` into them, so a loop over batches copies no node handle per batch.
using Feeds = std::vector<std::pair<Output, Tensor>>;
Feeds FeedSlots(const ModelState& m, const CompiledNodes& c,
                const ModelData& data);
absl::Status GatherBatchInto(const ModelState& m, const CompiledNodes& c,
                             const ModelData& data,
                             absl::Span<const int64_t> rows, Feeds& feeds);

absl::Status InOwnFit(const std::string& where);
absl::Status NoSamples(const std::string& where);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_ENGINE_H_
