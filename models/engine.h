// models/engine.h
//
// The training engine: how a model (a ModelGraph, models/model_graph.h) is
// built, compiled, evaluated and run. Private to models/. Sequential is a
// handle on a ModelState that BuildModel made from its linear graph; every
// model shape is the same engine with another graph builder.
//
//   BuildModel:    the layers' builds and the forward paths (inference, and
//                  training when a layer behaves otherwise in training).
//   CompileModel:  the training step (loss, metrics, gradients, updates;
//                  models/training.h) and Evaluate's loss on the inference
//                  path.
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
#include "models/sequential.h"
#include "models/training.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "util/mutex.h"

namespace graphgc {
namespace models_internal {

struct ModelState {
  Graph* graph = nullptr;
  ScopeReservation scope;
  std::string label;  // "Sequential '<name>'"
  std::vector<Layer> layers;
  // Each layer call's build (kept alive by `layers`), and those with
  // weights, in call order.
  std::vector<const BuiltLayer*> built;
  std::vector<const BuiltLayer*> weighted;
  std::unique_ptr<Session> session;
  Output input;
  // The inference forward path (Evaluate, Predict) and the training one
  // (Fit's step). They are the same nodes unless a layer behaves otherwise
  // in training (Dropout, BatchNormalization): a Dense stack's step has
  // no extra node.
  Output output;
  std::optional<Output> softmax_logits;
  Output train_output;
  std::optional<Output> train_softmax_logits;
  std::vector<NodeHandle> train_updates;  // run by every training step
  bool separate_training_path = false;
  TensorShape input_shape;                // per sample, as Input was given
  TensorShape output_shape;               // per sample
  std::vector<TensorShape> layer_shapes;  // each call's per-sample output
  int64_t in_dim = 0;                     // values per input sample
  int64_t out_dim = 0;                    // values per output sample
  int64_t units = 0;                      // the output's last dimension

  // Set by StopTraining (from any thread), cleared when a Fit starts; Fit
  // reads it after every batch and every epoch.
  std::atomic<bool> stop_training{false};

  // The model's lock: not recursive, and never held across a user
  // callback. Guards `fitting` and the fields Compile sets; the fields
  // above are set by BuildModel and never change.
  Mutex mu;
  bool compiled ABSL_GUARDED_BY(mu) = false;
  CompileOptions compile ABSL_GUARDED_BY(mu);
  // "accuracy" / "acc" when asked for
  std::string metric_name ABSL_GUARDED_BY(mu);
  Output labels ABSL_GUARDED_BY(mu);
  Output loss ABSL_GUARDED_BY(mu);  // of the training path (Fit's logs)
  std::optional<Output> accuracy ABSL_GUARDED_BY(mu);
  // Of the inference path (Evaluate, validation).
  Output eval_loss ABSL_GUARDED_BY(mu);
  std::optional<Output> eval_accuracy ABSL_GUARDED_BY(mu);
  Output train_op ABSL_GUARDED_BY(mu);
  models_internal::LearningRateNodes learning_rate ABSL_GUARDED_BY(mu);
  // Signalled when a Fit ends.
  CondVar fit_ended;
  // The thread running this model's Fit, while one runs. That Fit does not
  // hold `mu` (its callbacks may call the model between steps): it works
  // on a copy of what it needs (CompiledNodes), taken under `mu` before it
  // lets go. Calls from other threads wait for it to end (ModelCall), so
  // calls on one model stay serialised.
  std::optional<std::thread::id> fitting ABSL_GUARDED_BY(mu);

  Output Own(const Output& o) const {
    return Output(o.handle().WithOwner(label), o.index());
  }

  ~ModelState() {
    // Drop the session (and its cached plans) before the handles.
    session.reset();
  }
};

// One call's hold on a model: its lock, taken once no other thread's Fit
// runs on it. Under it, a Fit still marked running (ModelState::fitting) is
// the caller's own: the caller is one of its callbacks.
class ABSL_SCOPED_LOCKABLE ModelCall {
 public:
  explicit ModelCall(ModelState& m) ABSL_EXCLUSIVE_LOCK_FUNCTION(m.mu) : m_(m) {
    m.mu.Lock();
    const std::thread::id me = std::this_thread::get_id();
    while (m.fitting.has_value() && *m.fitting != me) m.fit_ended.Wait(m.mu);
  }
  ~ModelCall() ABSL_UNLOCK_FUNCTION() {
    if (locked_) m_.mu.Unlock();
  }
  ModelCall(const ModelCall&) = delete;
  ModelCall& operator=(const ModelCall&) = delete;

  // Lets go of the lock early (a Fit, once marked running).
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    locked_ = false;
    m_.mu.Unlock();
  }

 private:
  ModelState& m_;
  bool locked_ = true;
};

// How the labels of a loss look.
enum class LabelKind { kSparse, kDense };

LabelKind LabelsOf(const Loss& loss);

// What training and evaluating read of a compiled model, copied under the
// model's lock, so that a Fit runs on it without the lock.
struct CompiledNodes {
  LabelKind label_kind = LabelKind::kSparse;
  std::string metric_name;
  Output labels;
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
absl::StatusOr<std::map<std::string, float>> EvaluateModel(ModelState& m,
                                                           const Tensor& x,
                                                           const Tensor& y,
                                                           int batch_size);
absl::StatusOr<Tensor> PredictModel(ModelState& m, const Tensor& x,
                                    int batch_size);

// Loss and metrics over (x, y), already checked and with samples, without
// training; weighted by batch size. Evaluate and Fit's validation.
absl::StatusOr<Logs> EvaluateOn(ModelState& m, const CompiledNodes& c,
                                const Tensor& x, const Tensor& y,
                                int batch_size);

absl::Status InOwnFit(const std::string& where);
absl::Status NoSamples(const std::string& where);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_ENGINE_H_
