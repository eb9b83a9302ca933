// models/model_state.h
//
// ModelState: what a model handle (Sequential) shares, as the training
// engine (models/engine.h) builds and trains it, and ModelCall, one call's
// hold on it. Private to models/; below the engine and what it calls
// (models/batches.h), so that they read a model without including each
// other.
#ifndef GRAPHGC_MODELS_MODEL_STATE_H_
#define GRAPHGC_MODELS_MODEL_STATE_H_

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
#include "models/metric_registry.h"
#include "models/model_graph.h"
#include "models/model_options.h"
#include "models/optimizer_registry.h"
#include "models/training.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "util/mutex.h"

namespace graphgc {
namespace models_internal {

// How the labels of a loss look.
enum class LabelKind { kSparse, kDense };

LabelKind LabelsOf(const Loss& loss);

// One trained output's compiled nodes (an output without a loss has none).
struct OutputNodes {
  int output = 0;      // its position in the model's outputs
  std::string prefix;  // of its log keys: "<output name>_" with several
                       // outputs (Keras 3's names), else ""
  Loss loss;
  LabelKind label_kind = LabelKind::kSparse;
  int64_t units = 0;  // the output's last dimension
  Output labels;
  Output loss_value;  // unweighted, on the training path
  Output eval_loss;   // unweighted, on the inference path
  // Its metrics (keys prefixed as its losses'), on the training path and on
  // the inference path (the same nodes when the paths are the same).
  std::vector<MetricNode> metrics;
  std::vector<MetricNode> eval_metrics;
};

struct ModelState {
  Graph* graph = nullptr;
  ScopeReservation scope;
  std::string label;       // "Sequential '<name>'"
  std::string class_name;  // "Sequential", "Functional"
  // The layer calls the model was built from: Summary's rows and
  // connections.
  ModelGraph calls;
  // Each layer once, in the order of its first call (Keras's model.layers).
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
  // Every input and output, in the model's order; the fields above are
  // element 0's.
  std::vector<Output> inputs;
  std::vector<std::string> input_names;  // each Input's name, as output_names
  std::vector<TensorShape> input_shapes;
  std::vector<int64_t> in_dims;
  std::vector<Output> outputs;
  std::vector<std::optional<Output>> outputs_softmax_logits;
  std::vector<Output> train_outputs;
  std::vector<std::optional<Output>> train_outputs_softmax_logits;
  std::vector<TensorShape> output_shapes;
  std::vector<int64_t> out_dims;
  // Each output's layer name as given (else as built): its log keys' prefix.
  std::vector<std::string> output_names;

  // Set by StopTraining (from any thread), cleared when a Fit starts; Fit
  // reads it after every batch and every epoch.
  std::atomic<bool> stop_training{false};

  // The model's lock: not recursive, and never held across a user
  // callback. Guards `fitting` and the fields Compile sets; the fields
  // above are set by BuildModel and never change.
  Mutex mu;
  bool compiled ABSL_GUARDED_BY(mu) = false;
  CompileOptions compile ABSL_GUARDED_BY(mu);
  Output labels ABSL_GUARDED_BY(mu);  // the first trained output's
  // float [batch] per-sample loss weights shared by every trained output's
  // loss; fed every run (ones when no weights are given).
  Output sample_weight ABSL_GUARDED_BY(mu);
  // The total loss: each trained output's loss times its weight, summed.
  Output loss ABSL_GUARDED_BY(mu);  // of the training path (Fit's logs)
  // Each trained output's nodes (their metrics included), in output order.
  std::vector<OutputNodes> output_nodes ABSL_GUARDED_BY(mu);
  // Of the inference path (Evaluate, validation).
  Output eval_loss ABSL_GUARDED_BY(mu);
  Output train_op ABSL_GUARDED_BY(mu);
  models_internal::LearningRateNodes learning_rate ABSL_GUARDED_BY(mu);
  // The ReadVariableOp of the optimizer's int64 step count (Keras's
  // optimizer.iterations).
  Output iterations ABSL_GUARDED_BY(mu);
  // Keras's optimizer.variables (what Save writes under "optimizer") and
  // the step powers a restored iteration count sets.
  std::vector<models_internal::OptimizerVariable> optimizer_state
      ABSL_GUARDED_BY(mu);
  std::vector<models_internal::StepPowerVariable> optimizer_step_powers
      ABSL_GUARDED_BY(mu);
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

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_MODEL_STATE_H_
