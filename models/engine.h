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
// The engine runs models of one input and one output today: BuildModel
// refuses others (Unimplemented) before building anything.
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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gc/handle.h"
#include "models/callbacks.h"
#include "models/layer_state.h"
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
  std::string metric_name;
  Output labels;
  Output sample_weight;  // fed every run: ones without weights
  Output loss;
  std::optional<Output> accuracy;
  Output eval_loss;
  std::optional<Output> eval_accuracy;
  Output train_op;
};

CompiledNodes CompiledNodesOf(const ModelState& m)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(m.mu);

// What BuildModel needs besides the graph of layer calls.
struct BuildOptions {
  std::string name;          // empty: `default_name`, uniqued in the graph
  std::string default_name;  // "sequential"
  std::string class_name;    // "Sequential": the owner label's prefix
  int intra_op_threads = 1;
  std::string where;  // "Sequential::Create", prefixing errors
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
absl::StatusOr<std::map<std::string, float>> EvaluateModel(
    ModelState& m, const Tensor& x, const Tensor& y, int batch_size,
    const Tensor* sample_weight = nullptr);
absl::StatusOr<Tensor> PredictModel(ModelState& m, const Tensor& x,
                                    int batch_size);

// Loss and metrics over (x, y), already checked and with samples, without
// training; weighted by batch size. Evaluate and Fit's validation. With
// `count` >= 0, over rows [first_row, first_row + count) only (in range,
// count > 0: validation_split's held-out rows, read in place). The loss
// weighs each row by its entry of `sample_weight` (float [x's rows]) when
// given.
absl::StatusOr<Logs> EvaluateOn(ModelState& m, const CompiledNodes& c,
                                const Tensor& x, const Tensor& y,
                                int batch_size, int64_t first_row = 0,
                                int64_t count = -1,
                                const Tensor* sample_weight = nullptr);

absl::Status InOwnFit(const std::string& where);
absl::Status NoSamples(const std::string& where);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_ENGINE_H_
