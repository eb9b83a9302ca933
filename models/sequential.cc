#include "models/sequential.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <thread>
#include <tuple>
#include <utility>
#include <variant>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "models/layer_state.h"
#include "models/saving_access.h"
#include "models/training.h"
#include "ops/gradients.h"
#include "runtime/session.h"
#include "util/mutex.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

struct ModelState {
  Graph* graph = nullptr;
  ScopeReservation scope;
  std::string label;  // "Sequential '<name>'"
  std::vector<Layer> layers;
  // Each layer's build (kept alive by `layers`), and those with weights, in
  // layer order.
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
  std::vector<TensorShape> layer_shapes;  // each layer's per-sample output
  int64_t in_dim = 0;                     // values per input sample
  int64_t out_dim = 0;                    // values per output sample
  int64_t units = 0;                      // the output's last dimension

  // Set by StopTraining (from any thread), cleared when a Fit starts; Fit
  // reads it after every batch and every epoch.
  std::atomic<bool> stop_training{false};

  // The model's lock: not recursive, and never held across a user
  // callback. Guards `fitting` and the fields Compile sets; the fields
  // above are set by Create and never change.
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

}  // namespace models_internal

using models_internal::BuiltLayer;
using models_internal::LayerState;
using models_internal::ModelState;

const std::vector<float>& History::values(const std::string& key) const {
  static const std::vector<float>* const kEmpty = new std::vector<float>();
  auto it = history.find(key);
  return it == history.end() ? *kEmpty : it->second;
}

namespace {

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

// Marks this thread's Fit of a model as running, from its construction
// (under the model's lock) until its destruction.
class FitRunning {
 public:
  explicit FitRunning(ModelState& m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(m.mu)
      : m_(m) {
    m.fitting = std::this_thread::get_id();
  }
  FitRunning(const FitRunning&) = delete;
  FitRunning& operator=(const FitRunning&) = delete;
  ~FitRunning() ABSL_LOCKS_EXCLUDED(m_.mu) {
    {
      WriterLock lock(m_.mu);
      m_.fitting.reset();
    }
    m_.fit_ended.SignalAll();
  }

 private:
  ModelState& m_;
};

absl::Status MovedFrom(const char* method) {
  return absl::FailedPreconditionError(absl::StrCat(
      "Sequential::", method,
      ": the model was moved from (use the object it was moved to)"));
}

absl::Status InOwnFit(const std::string& where) {
  return absl::FailedPreconditionError(
      absl::StrCat(where, ": called from a callback of the model's own Fit"));
}

absl::Status NoSamples(const std::string& where) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": no samples"));
}

// A copy of `t` with a buffer of its own, so that what the model holds and
// what the caller holds can never change each other.
absl::StatusOr<Tensor> PrivateCopy(const Tensor& t) {
  return Tensor::FromData<float>(t.shape(), t.data<float>());
}

// How the labels of a loss look.
enum class LabelKind { kSparse, kDense };

LabelKind LabelsOf(const Loss& loss) {
  return loss.kind == Loss::Kind::kSparseCategoricalCrossentropy
             ? LabelKind::kSparse
             : LabelKind::kDense;
}

// [rows, sample...]: a batch of samples of `sample` shape.
TensorShape BatchShape(int64_t rows, const TensorShape& sample) {
  std::vector<int64_t> dims = {rows};
  for (int i = 0; i < sample.dims(); ++i) dims.push_back(sample[i]);
  return TensorShape(dims);
}

absl::StatusOr<int64_t> CheckX(const ModelState& m, const Tensor& x,
                               const std::string& where) {
  if (x.dtype() != DT_FLOAT) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": x must be float, got ", DataTypeString(x.dtype())));
  }
  bool fits = x.shape().dims() == m.input_shape.dims() + 1;
  for (int i = 0; fits && i < m.input_shape.dims(); ++i) {
    fits = x.shape()[i + 1] == m.input_shape[i];
  }
  if (!fits) {
    std::string takes = "[samples";
    for (int i = 0; i < m.input_shape.dims(); ++i) {
      absl::StrAppend(&takes, ", ", m.input_shape[i]);
    }
    takes += "]";
    if (m.input_shape.dims() == 1) {
      absl::StrAppend(&takes, " (", m.in_dim, " features)");
    }
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": x has shape ", x.shape().DebugString(),
                     " but model '", m.scope.name(), "' takes ", takes));
  }
  return x.shape()[0];
}

absl::Status CheckY(const ModelState& m, const Tensor& y, int64_t samples,
                    const std::string& where)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(m.mu) {
  if (y.shape().dims() == 0 || y.shape()[0] != samples) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": x has ", samples, " samples but y has ",
                     y.shape().dims() == 0 ? std::string("a scalar")
                                           : absl::StrCat(y.shape()[0]),
                     " (shape ", y.shape().DebugString(), ")"));
  }
  if (LabelsOf(m.compile.loss) == LabelKind::kSparse) {
    const bool column = y.shape().dims() == 2 && y.shape()[1] == 1;
    if ((y.dtype() != DT_INT32 && y.dtype() != DT_INT64) ||
        (y.shape().dims() != 1 && !column)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": ", m.compile.loss.name(),
          " takes integer class labels of shape [samples], got ",
          DataTypeString(y.dtype()), " ", y.shape().DebugString()));
    }
    for (int64_t i = 0; i < samples; ++i) {
      const int64_t label =
          y.dtype() == DT_INT32 ? y.data<int32_t>()[i] : y.data<int64_t>()[i];
      if (label < 0 || label >= m.units) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": label ", label, " of sample ", i,
                         " is outside [0, ", m.units, ")"));
      }
    }
    return absl::OkStatus();
  }
  const bool flat_ok = y.shape().dims() == 1 && m.units == 1;
  if (y.dtype() != DT_FLOAT ||
      !(flat_ok || (y.shape().dims() == 2 && y.shape()[1] == m.units))) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": ", m.compile.loss.name(), " takes float targets of shape [",
        samples, ", ", m.units, "], got ", DataTypeString(y.dtype()), " ",
        y.shape().DebugString()));
  }
  return absl::OkStatus();
}

// Samples `rows` of x (float [n, sample...], `cols` values per sample) as a
// new [rows.size(), sample...] tensor.
absl::StatusOr<Tensor> GatherRows(const Tensor& x, const TensorShape& sample,
                                  int64_t cols,
                                  absl::Span<const int64_t> rows) {
  // Every element is written below.
  GG_ASSIGN_OR_RETURN(
      Tensor out,
      Tensor::Uninitialized(
          DT_FLOAT, BatchShape(static_cast<int64_t>(rows.size()), sample)));
  const float* src = x.data<float>().data();
  float* dst = out.mutable_data<float>().data();
  // The rows are scattered (shuffled) and x rarely stays in L1 between
  // steps: ask for every row's first line up front so the misses overlap.
  for (int64_t r : rows) __builtin_prefetch(src + r * cols);
  // Packet copies rather than a memcpy call per row: rows are short (tens
  // of features), and this runs every step. A row's last packet ends at
  // its end, overlapping the one before when cols is not a multiple of the
  // packet size; rows shorter than a packet are copied element by element.
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<float>::type;
  constexpr int64_t kPacket = ei::packet_traits<float>::size;
  for (size_t i = 0; i < rows.size(); ++i) {
    const float* row = src + rows[i] * cols;
    float* to = dst + i * cols;
    if (cols < kPacket) {
      for (int64_t j = 0; j < cols; ++j) to[j] = row[j];
      continue;
    }
    for (int64_t j = 0; j < cols - kPacket; j += kPacket) {
      ei::pstoreu(to + j, ei::ploadu<Packet>(row + j));
    }
    ei::pstoreu(to + cols - kPacket, ei::ploadu<Packet>(row + cols - kPacket));
  }
  return out;
}

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
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(m.mu) {
  return CompiledNodes{.label_kind = LabelsOf(m.compile.loss),
                       .metric_name = m.metric_name,
                       .labels = m.labels,
                       .loss = m.loss,
                       .accuracy = m.accuracy,
                       .eval_loss = m.eval_loss,
                       .eval_accuracy = m.eval_accuracy,
                       .train_op = m.train_op};
}

// The labels of `rows` as the loss's placeholder takes them.
absl::StatusOr<Tensor> GatherLabels(const ModelState& m, LabelKind kind,
                                    const Tensor& y,
                                    absl::Span<const int64_t> rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  if (kind == LabelKind::kSparse) {
    GG_ASSIGN_OR_RETURN(Tensor out, Tensor::Uninitialized(DT_INT32, {n}));
    auto dst = out.mutable_data<int32_t>();
    for (int64_t i = 0; i < n; ++i) {
      dst[i] = y.dtype() == DT_INT32
                   ? y.data<int32_t>()[rows[i]]
                   : static_cast<int32_t>(y.data<int64_t>()[rows[i]]);
    }
    return out;
  }
  return GatherRows(y, {m.units}, m.units, rows);
}

// Loss and metrics over (x, y) without training; weighted by batch size.
absl::StatusOr<Logs> EvaluateOn(ModelState& m, const CompiledNodes& c,
                                const Tensor& x, const Tensor& y,
                                int batch_size) {
  const int64_t n = x.shape()[0];
  std::vector<int64_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0);
  double loss_sum = 0, acc_sum = 0;
  std::vector<Output> fetches = {c.eval_loss};
  if (c.eval_accuracy.has_value()) fetches.push_back(*c.eval_accuracy);
  for (int64_t begin = 0; begin < n; begin += batch_size) {
    const int64_t end = std::min<int64_t>(n, begin + batch_size);
    absl::Span<const int64_t> batch(rows.data() + begin, end - begin);
    GG_ASSIGN_OR_RETURN(Tensor bx,
                        GatherRows(x, m.input_shape, m.in_dim, batch));
    GG_ASSIGN_OR_RETURN(Tensor by, GatherLabels(m, c.label_kind, y, batch));
    GG_ASSIGN_OR_RETURN(
        std::vector<Tensor> out,
        m.session->Run({{m.input, std::move(bx)}, {c.labels, std::move(by)}},
                       fetches));
    loss_sum += out[0].data<float>()[0] * (end - begin);
    if (out.size() > 1) acc_sum += out[1].data<float>()[0] * (end - begin);
  }
  // n > 0: callers refuse empty data.
  Logs logs;
  logs["loss"] = static_cast<float>(loss_sum / n);
  if (c.eval_accuracy.has_value()) {
    logs[c.metric_name] = static_cast<float>(acc_sum / n);
  }
  return logs;
}

}  // namespace

absl::StatusOr<Sequential> Sequential::Create(std::vector<Layer> layers,
                                              SequentialOptions options) {
  if (layers.empty()) {
    return absl::InvalidArgumentError("Sequential::Create: no layers");
  }
  Graph& graph = options.graph != nullptr ? *options.graph : Graph::Default();
  // A safe point: no model is built or run by this call yet.
  graph.collector().MaybeCollect();
  std::vector<LayerState*> states;
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerState* s = layers[i].state_.get();
    if (s == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sequential::Create: layer ", i,
                       " is empty (default-constructed or moved from)"));
    }
    if (!s->error.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Sequential::Create: layer ", i, ": ", s->error.message()));
    }
    const bool is_input = models_internal::IsInputLayer(*s);
    if ((i == 0) != is_input) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Sequential::Create: layer ", i, " is ", layers[i].kind(),
          i == 0 ? "; the first layer must be layers::Input"
                 : "; only the first layer may be an Input"));
    }
    if (std::find(states.begin(), states.end(), s) != states.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sequential::Create: layer ", i, " ('", layers[i].name(),
                       "') appears twice in the stack"));
    }
    states.push_back(s);
  }
  // Validate every layer against the graph and its input shape first.
  std::vector<TensorShape> shapes = {states[0]->input_shape};
  for (size_t i = 0; i < states.size(); ++i) {
    absl::StatusOr<TensorShape> out =
        models_internal::CheckLayer(*states[i], graph, shapes.back());
    if (!out.ok()) {
      return Annotate(out.status(),
                      absl::StrCat("Sequential::Create: layer ", i));
    }
    if (i > 0) shapes.push_back(*std::move(out));
  }
  // Input's shape was checked (a valid, fully known shape), as was every
  // layer's output: these counts cannot fail.
  absl::StatusOr<int64_t> in_dim = shapes.front().CheckedNumElements();
  absl::StatusOr<int64_t> out_dim = shapes.back().CheckedNumElements();
  GG_RETURN_IF_ERROR(in_dim.status());
  GG_RETURN_IF_ERROR(out_dim.status());

  auto m = std::make_shared<ModelState>();
  m->graph = &graph;
  m->scope =
      graph.ReserveScope(options.name.empty() ? "sequential" : options.name);
  m->label = absl::StrCat("Sequential '", m->scope.name(), "'");
  m->layers = layers;
  m->session = std::make_unique<Session>(
      graph, SessionOptions{.intra_op_threads = options.intra_op_threads});
  m->input_shape = shapes.front();
  m->output_shape = shapes.back();
  m->layer_shapes = shapes;
  m->in_dim = *in_dim;
  m->out_dim = *out_dim;
  m->units = shapes.back()[shapes.back().dims() - 1];
  for (size_t i = 0; i < states.size(); ++i) {
    GG_RETURN_IF_ERROR(models_internal::BuildLayer(
        *states[i], graph, i == 0 ? shapes[0] : shapes[i - 1], *m->session));
    const BuiltLayer* built = states[i]->built();
    if (built == nullptr) {
      return absl::InternalError(
          absl::StrCat("Create: ", models_internal::LayerLabel(*states[i]),
                       " is not built after BuildLayer succeeded"));
    }
    m->built.push_back(built);
    if (HasTrainingPath(*states[i])) m->separate_training_path = true;
    if (!built->variables.empty()) m->weighted.push_back(built);
  }
  // The forward paths: inference, then (only when a layer needs it)
  // training.
  for (const bool training : {false, true}) {
    if (training && !m->separate_training_path) break;
    Output x = m->built[0]->placeholder;
    std::optional<Output> logits;
    std::vector<NodeHandle> updates;
    for (size_t i = 1; i < states.size(); ++i) {
      GG_ASSIGN_OR_RETURN(models_internal::LayerOutputs out,
                          models_internal::ApplyLayer(*states[i], x, training));
      x = out.output;
      logits.reset();
      if (out.softmax) logits = m->Own(out.pre_activation);
      for (NodeHandle& u : out.updates) {
        updates.push_back(u.WithOwner(m->label));
      }
    }
    if (training) {
      m->train_output = m->Own(x);
      m->train_softmax_logits = logits;
      m->train_updates = std::move(updates);
    } else {
      m->output = m->Own(x);
      m->softmax_logits = logits;
    }
  }
  if (!m->separate_training_path) {
    m->train_output = m->output;
    m->train_softmax_logits = m->softmax_logits;
  }
  m->input = m->Own(m->built[0]->placeholder);
  return Sequential(std::move(m));
}

absl::Status Sequential::Compile(CompileOptions options) {
  if (state_ == nullptr) return MovedFrom("Compile");
  ModelState& m = *state_;
  // A safe point, before the model's lock (collect listeners never need it).
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  if (m.fitting.has_value()) {  // called from a callback of its own Fit
    return InOwnFit(absl::StrCat("Compile of '", m.scope.name(), "'"));
  }
  if (std::holds_alternative<std::monostate>(options.optimizer.options)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Compile of '", m.scope.name(),
                     "': no optimizer (use optimizers::Adam() or SGD())"));
  }
  if (options.loss.kind == Loss::Kind::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("Compile of '", m.scope.name(), "': no loss"));
  }
  if (absl::Status s = models_internal::CheckOptimizer(options.optimizer);
      !s.ok()) {
    return Annotate(s, absl::StrCat("Compile of '", m.scope.name(), "'"));
  }
  std::string metric_name;
  for (const std::string& metric : options.metrics) {
    if (metric != "accuracy" && metric != "acc") {
      return absl::InvalidArgumentError(
          absl::StrCat("Compile of '", m.scope.name(), "': unknown metric '",
                       metric, "' (supported: accuracy)"));
    }
    metric_name = metric;
  }
  std::vector<Output> reads, vars;
  std::vector<TensorShape> shapes;
  for (const BuiltLayer* layer : m.weighted) {
    for (const models_internal::Variable& v : layer->variables) {
      if (!v.trainable) continue;
      reads.push_back(v.read);
      vars.push_back(v.handle);
      shapes.push_back(v.shape);
    }
  }
  if (vars.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Compile of '", m.scope.name(), "': the model has no trainable layer"));
  }
  if (m.output_shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Compile of '", m.scope.name(), "': the model's output is ",
        models_internal::KerasShape(m.output_shape),
        " but losses take (None, units) outputs; end the model with Flatten "
        "and Dense"));
  }
  const std::string scope = m.scope.name();
  GG_ASSIGN_OR_RETURN(
      models_internal::LossNodes loss,
      models_internal::BuildLoss(options.loss,
                                 {.output = m.train_output,
                                  .softmax_logits = m.train_softmax_logits,
                                  .units = m.units},
                                 scope, !metric_name.empty()));
  // Evaluate's loss and metrics, on the inference path, over the same
  // labels (the same nodes when the paths are the same).
  models_internal::LossNodes eval = loss;
  if (m.separate_training_path) {
    GG_ASSIGN_OR_RETURN(eval, models_internal::BuildLoss(
                                  options.loss,
                                  {.output = m.output,
                                   .softmax_logits = m.softmax_logits,
                                   .units = m.units,
                                   .labels = loss.labels},
                                  scope + "/inference", !metric_name.empty()));
  }
  GG_ASSIGN_OR_RETURN(
      std::vector<Output> grads,
      AddGradients(loss.loss, reads, std::nullopt, scope + "/gradients"));
  std::vector<NodeHandle> after = {loss.loss.handle()};
  if (loss.accuracy.has_value()) after.push_back(loss.accuracy->handle());
  GG_ASSIGN_OR_RETURN(
      models_internal::UpdateNodes updates,
      models_internal::BuildUpdates(options.optimizer, vars, shapes, grads,
                                    after, scope, *m.session, m.train_updates));
  // Commit: from here nothing fails.
  m.compile = std::move(options);
  m.metric_name = metric_name;
  m.labels = m.Own(loss.labels);
  m.loss = m.Own(loss.loss);
  m.accuracy.reset();
  if (loss.accuracy.has_value()) m.accuracy = m.Own(*loss.accuracy);
  m.eval_loss = m.Own(eval.loss);
  m.eval_accuracy.reset();
  if (eval.accuracy.has_value()) m.eval_accuracy = m.Own(*eval.accuracy);
  m.train_op = m.Own(updates.train_op);
  m.learning_rate = {.variable = m.Own(updates.learning_rate.variable),
                     .read = m.Own(updates.learning_rate.read),
                     .assign_value = m.Own(updates.learning_rate.assign_value),
                     .assign = m.Own(updates.learning_rate.assign)};
  m.compiled = true;
  return absl::OkStatus();
}

absl::StatusOr<History> Sequential::Fit(const Tensor& x, const Tensor& y,
                                        FitOptions options) {
  if (state_ == nullptr) return MovedFrom("Fit");
  ModelState& m = *state_;
  m.graph->collector().MaybeCollect();
  const std::string where = absl::StrCat("Fit of '", m.scope.name(), "'");
  // The checks run under the model's lock; the fit itself does not hold it
  // (its callbacks may call the model): `running` keeps other threads'
  // calls out until the fit ends.
  std::optional<FitRunning> running;
  ModelCall call(m);
  if (m.fitting.has_value()) return InOwnFit(where);  // from its callback
  if (!m.compiled) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": the model is not compiled; call Compile first"));
  }
  if (options.batch_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": batch_size must be >= 1, got ", options.batch_size));
  }
  if (options.epochs < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": epochs must be >= 0, got ", options.epochs));
  }
  if (options.verbose < 0 || options.verbose > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": verbose must be 0, 1 or 2, got ", options.verbose));
  }
  GG_ASSIGN_OR_RETURN(const int64_t n, CheckX(m, x, where));
  GG_RETURN_IF_ERROR(CheckY(m, y, n, where));
  if (n == 0) return NoSamples(where);
  if (options.validation_data.has_value()) {
    const std::string vwhere = where + " (validation_data)";
    GG_ASSIGN_OR_RETURN(const int64_t vn,
                        CheckX(m, options.validation_data->first, vwhere));
    GG_RETURN_IF_ERROR(CheckY(m, options.validation_data->second, vn, vwhere));
    if (vn == 0) return NoSamples(vwhere);
  }
  running.emplace(m);
  m.stop_training.store(false);  // Keras: fit() clears stop_training
  const CompiledNodes c = CompiledNodesOf(m);
  call.Unlock();

  std::vector<std::shared_ptr<Callback>> callbacks;
  if (options.verbose > 0) {
    callbacks.push_back(callbacks::ProgressBar::Create(
        {.redraw = options.verbose == 1 ? -1 : 0}));
  }
  for (auto& cb : options.callbacks) {
    if (cb != nullptr) callbacks.push_back(cb);
  }
  // Held to the end of the fit: no other fit may use these callbacks.
  GG_ASSIGN_OR_RETURN(CallbackClaims claims,
                      ClaimCallbacks(callbacks, m.scope.name()));
  const int64_t steps = (n + options.batch_size - 1) / options.batch_size;
  TrainInfo info{.epochs = options.epochs,
                 .samples = n,
                 .steps_per_epoch = steps,
                 .batch_size = options.batch_size,
                 .verbose = options.verbose,
                 .has_validation = options.validation_data.has_value()};
  for (auto& cb : callbacks) GG_RETURN_IF_ERROR(cb->OnTrainBegin(*this, info));

  History history;
  std::vector<int64_t> order(n);
  std::vector<Output> fetches = {c.loss};
  if (c.accuracy.has_value()) fetches.push_back(*c.accuracy);
  // Built once: each step only swaps in its batch, so no node handle is
  // copied (and counted) per step.
  // The tensors are made in place: g++ 12 at -O1 (the TSan build) took
  // moving a default Tensor's inline shape storage for a read of
  // uninitialised memory (-Wmaybe-uninitialized).
  std::vector<std::pair<Output, Tensor>> feeds;
  feeds.reserve(2);
  feeds.emplace_back(std::piecewise_construct, std::forward_as_tuple(m.input),
                     std::forward_as_tuple());
  feeds.emplace_back(std::piecewise_construct, std::forward_as_tuple(c.labels),
                     std::forward_as_tuple());
  const std::vector<Output> targets = {c.train_op};
  Logs epoch_logs;
  for (int epoch = 0; epoch < options.epochs && !m.stop_training.load();
       ++epoch) {
    std::iota(order.begin(), order.end(), 0);
    if (options.shuffle) {
      std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ull + epoch);
      std::shuffle(order.begin(), order.end(), rng);
    }
    for (auto& cb : callbacks) GG_RETURN_IF_ERROR(cb->OnEpochBegin(epoch));
    double loss_sum = 0, acc_sum = 0;
    int64_t seen = 0;  // samples trained this epoch
    for (int64_t step = 0; step < steps; ++step) {
      for (auto& cb : callbacks) GG_RETURN_IF_ERROR(cb->OnBatchBegin(step));
      const int64_t begin = step * options.batch_size;
      const int64_t end = std::min<int64_t>(n, begin + options.batch_size);
      absl::Span<const int64_t> rows(order.data() + begin, end - begin);
      GG_ASSIGN_OR_RETURN(feeds[0].second,
                          GatherRows(x, m.input_shape, m.in_dim, rows));
      GG_ASSIGN_OR_RETURN(feeds[1].second,
                          GatherLabels(m, c.label_kind, y, rows));
      // A safe point: nothing of this model is in flight.
      m.graph->collector().MaybeCollect();
      GG_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                          m.session->Run(feeds, fetches, targets));
      Logs batch_logs;
      batch_logs["loss"] = out[0].data<float>()[0];
      if (out.size() > 1) batch_logs[c.metric_name] = out[1].data<float>()[0];
      batch_logs["size"] = static_cast<float>(end - begin);
      loss_sum += batch_logs["loss"] * (end - begin);
      if (out.size() > 1) acc_sum += batch_logs[c.metric_name] * (end - begin);
      seen = end;
      for (auto& cb : callbacks) {
        GG_RETURN_IF_ERROR(cb->OnBatchEnd(step, batch_logs));
      }
      // Keras: a stop asked for by a batch hook ends the epoch here; the
      // epoch's logs average the batches run.
      if (m.stop_training.load()) break;
    }
    epoch_logs.clear();
    epoch_logs["loss"] = static_cast<float>(loss_sum / seen);
    if (c.accuracy.has_value()) {
      epoch_logs[c.metric_name] = static_cast<float>(acc_sum / seen);
    }
    if (options.validation_data.has_value()) {
      GG_ASSIGN_OR_RETURN(
          Logs val,
          EvaluateOn(m, c, options.validation_data->first,
                     options.validation_data->second, options.batch_size));
      for (const auto& [key, value] : val) epoch_logs["val_" + key] = value;
    }
    history.epoch.push_back(epoch);
    for (const auto& [key, value] : epoch_logs) {
      history.history[key].push_back(value);
    }
    for (auto& cb : callbacks) {
      GG_RETURN_IF_ERROR(cb->OnEpochEnd(epoch, epoch_logs));
    }
  }
  for (auto& cb : callbacks) GG_RETURN_IF_ERROR(cb->OnTrainEnd(epoch_logs));
  return history;
}

absl::StatusOr<std::map<std::string, float>> Sequential::Evaluate(
    const Tensor& x, const Tensor& y, int batch_size) {
  if (state_ == nullptr) return MovedFrom("Evaluate");
  ModelState& m = *state_;
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  const std::string where = absl::StrCat("Evaluate of '", m.scope.name(), "'");
  if (!m.compiled) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": the model is not compiled; call Compile first"));
  }
  if (batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": batch_size must be >= 1, got ", batch_size));
  }
  GG_ASSIGN_OR_RETURN(const int64_t n, CheckX(m, x, where));
  GG_RETURN_IF_ERROR(CheckY(m, y, n, where));
  if (n == 0) return NoSamples(where);
  GG_ASSIGN_OR_RETURN(Logs logs,
                      EvaluateOn(m, CompiledNodesOf(m), x, y, batch_size));
  return std::map<std::string, float>(logs.begin(), logs.end());
}

absl::StatusOr<Tensor> Sequential::Predict(const Tensor& x, int batch_size) {
  if (state_ == nullptr) return MovedFrom("Predict");
  ModelState& m = *state_;
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  const std::string where = absl::StrCat("Predict of '", m.scope.name(), "'");
  if (batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": batch_size must be >= 1, got ", batch_size));
  }
  GG_ASSIGN_OR_RETURN(const int64_t n, CheckX(m, x, where));
  // Every row is written below; a refused size allocates nothing.
  GG_ASSIGN_OR_RETURN(
      Tensor result,
      models_internal::NewTensor(DT_FLOAT, BatchShape(n, m.output_shape),
                                 /*zero=*/false, where + ": the predictions"));
  float* dst = result.mutable_data<float>().data();
  std::vector<int64_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0);
  for (int64_t begin = 0; begin < n; begin += batch_size) {
    const int64_t end = std::min<int64_t>(n, begin + batch_size);
    absl::Span<const int64_t> batch(rows.data() + begin, end - begin);
    GG_ASSIGN_OR_RETURN(Tensor bx,
                        GatherRows(x, m.input_shape, m.in_dim, batch));
    GG_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        m.session->Run({{m.input, std::move(bx)}}, {m.output}));
    // The result's size was checked above, so these products fit.
    std::memcpy(dst + begin * m.out_dim, out[0].data<float>().data(),
                (end - begin) * m.out_dim * sizeof(float));
  }
  return result;
}

std::vector<Tensor> Sequential::GetWeights() const {
  if (state_ == nullptr) return {};
  ModelState& m = *state_;
  ModelCall call(m);
  std::vector<Output> reads;
  for (const BuiltLayer* layer : m.weighted) {
    for (const auto& v : layer->variables) reads.push_back(v.read);
  }
  absl::StatusOr<std::vector<Tensor>> out = m.session->Run({}, reads);
  if (!out.ok()) return {};
  // The reads share the variables' buffers: hand out copies instead.
  std::vector<Tensor> weights;
  for (const Tensor& t : *out) {
    absl::StatusOr<Tensor> copy = PrivateCopy(t);
    if (!copy.ok()) return {};
    weights.push_back(*std::move(copy));
  }
  return weights;
}

absl::Status Sequential::SetWeights(const std::vector<Tensor>& weights) {
  if (state_ == nullptr) return MovedFrom("SetWeights");
  ModelState& m = *state_;
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  std::vector<const models_internal::Variable*> vars;
  for (const BuiltLayer* layer : m.weighted) {
    for (const auto& v : layer->variables) vars.push_back(&v);
  }
  const std::string where =
      absl::StrCat("SetWeights of '", m.scope.name(), "'");
  if (weights.size() != vars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the model has ", vars.size(), " weights, got ",
                     weights.size()));
  }
  std::vector<std::pair<Output, Tensor>> feeds;
  std::vector<Output> targets;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (weights[i].dtype() != DT_FLOAT ||
        weights[i].shape() != vars[i]->shape) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": weight ", i, " ('", vars[i]->name,
                       "') must be float ", vars[i]->shape.DebugString(),
                       ", got ", DataTypeString(weights[i].dtype()), " ",
                       weights[i].shape().DebugString()));
    }
    // A copy: the variable must not share the caller's buffer.
    GG_ASSIGN_OR_RETURN(Tensor copy, PrivateCopy(weights[i]));
    feeds.emplace_back(vars[i]->assign_value, std::move(copy));
    targets.push_back(vars[i]->assign);
  }
  // One run assigns them all, after every check passed.
  return m.session->Run(feeds, {}, targets).status();
}

absl::StatusOr<float> Sequential::learning_rate() const {
  if (state_ == nullptr) return MovedFrom("learning_rate");
  ModelState& m = *state_;
  ModelCall call(m);
  if (!m.compiled) {
    return absl::FailedPreconditionError(
        absl::StrCat("learning_rate of '", m.scope.name(),
                     "': the model is not compiled; call Compile first"));
  }
  GG_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                      m.session->Run({}, {m.learning_rate.read}));
  return out[0].data<float>()[0];
}

absl::Status Sequential::SetLearningRate(float learning_rate) {
  if (state_ == nullptr) return MovedFrom("SetLearningRate");
  ModelState& m = *state_;
  ModelCall call(m);
  const std::string where =
      absl::StrCat("SetLearningRate of '", m.scope.name(), "'");
  if (!m.compiled) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": the model is not compiled; call Compile first"));
  }
  if (!std::isfinite(learning_rate) || learning_rate < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": learning_rate must be finite and >= 0, got ", learning_rate));
  }
  GG_RETURN_IF_ERROR(m.session
                         ->Run({{m.learning_rate.assign_value,
                                 Tensor::Scalar<float>(learning_rate)}},
                               {}, {m.learning_rate.assign})
                         .status());
  // The compile settings follow the variable (what a save would record).
  if (auto* adam = std::get_if<AdamOptions>(&m.compile.optimizer.options)) {
    adam->learning_rate = learning_rate;
  } else if (auto* sgd =
                 std::get_if<SGDOptions>(&m.compile.optimizer.options)) {
    sgd->learning_rate = learning_rate;
  }
  return absl::OkStatus();
}

void Sequential::StopTraining() {
  if (state_ != nullptr) state_->stop_training.store(true);
}

bool Sequential::stop_training() const {
  return state_ != nullptr && state_->stop_training.load();
}

const std::string& Sequential::name() const {
  static const std::string* const kNoName = new std::string();
  return state_ == nullptr ? *kNoName : state_->scope.name();
}

Graph& Sequential::graph() const {
  if (state_ == nullptr) {
    // No graph to return, and no status to say so: stop with a message
    // (in every build mode, unlike assert).
    std::fprintf(stderr,
                 "graphgc: Sequential::graph() called on a moved-from model "
                 "(use the object it was moved to)\n");
    std::abort();
  }
  return *state_->graph;
}

const std::vector<Layer>& Sequential::layers() const {
  static const std::vector<Layer>* const kNoLayers = new std::vector<Layer>();
  return state_ == nullptr ? *kNoLayers : state_->layers;
}

bool Sequential::compiled() const {
  if (state_ == nullptr) return false;
  // The model's lock alone, without waiting for a running Fit: Compile,
  // the only writer, waits for it.
  WriterLock lock(state_->mu);
  return state_->compiled;
}

std::vector<NodeHandle> Sequential::GraphRoots() const {
  if (state_ == nullptr) return {};
  ModelState& m = *state_;
  WriterLock lock(m.mu);
  std::vector<NodeHandle> roots;
  if (m.compiled) {
    roots.push_back(m.train_op.handle());
    roots.push_back(m.loss.handle());
    if (m.accuracy.has_value()) roots.push_back(m.accuracy->handle());
    if (m.separate_training_path) {
      roots.push_back(m.eval_loss.handle());
      if (m.eval_accuracy.has_value()) {
        roots.push_back(m.eval_accuracy->handle());
      }
    }
  }
  roots.push_back(m.output.handle());
  if (m.separate_training_path) {
    roots.push_back(m.train_output.handle());
    roots.insert(roots.end(), m.train_updates.begin(), m.train_updates.end());
  }
  return roots;
}

namespace {

// Keras's summary columns (its Sequential layout: 65 characters, columns
// ending at 45%, 85% and 100%).
constexpr int kSummaryWidth = 65;
constexpr int kColumnEnds[] = {29, 55, 65};

// One table row: each field starts at its column; a field too long for its
// column (keeping one space before the next) continues on the next line, as
// newer Kerases wrap it. Trailing spaces are left out.
void AppendRow(std::string& out, const std::vector<std::string>& fields) {
  std::vector<std::string> left = fields;
  bool first = true;
  while (first ||
         std::any_of(left.begin(), left.end(),
                     [](const std::string& f) { return !f.empty(); })) {
    first = false;
    std::string line;
    int start = 0;
    for (size_t c = 0; c < left.size(); ++c) {
      const bool last = c + 1 == left.size();
      const size_t room = last
                              ? std::string::npos
                              : static_cast<size_t>(kColumnEnds[c] - start - 1);
      line.resize(start, ' ');
      line += left[c].substr(0, room);
      left[c] = room >= left[c].size() ? "" : left[c].substr(room);
      start = kColumnEnds[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
}

// a + b for counts >= 0, at most INT64_MAX (parameter counts of weights
// that exist in memory never get there).
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum)
             ? std::numeric_limits<int64_t>::max()
             : sum;
}

// 1234567 as "1,234,567" (Keras's "{:,}").
std::string WithCommas(int64_t n) {
  std::string digits = absl::StrCat(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string Sequential::Summary() const {
  if (state_ == nullptr) return "";
  ModelState& m = *state_;
  ModelCall call(m);
  const std::string rule(kSummaryWidth, '_');
  const std::string double_rule(kSummaryWidth, '=');
  std::string out = absl::StrCat("Model: \"", m.scope.name(), "\"\n");
  out += rule + "\n";
  AppendRow(out, {"Layer (type)", "Output Shape", "Param #"});
  out += double_rule + "\n";
  int64_t trainable = 0, non_trainable = 0;
  // The Input layer is no row, as in Keras.
  for (size_t i = 1; i < m.layers.size(); ++i) {
    const models_internal::SummaryRow row = models_internal::LayerSummaryRow(
        *m.layers[i].state_, m.layers[i].name(), m.layer_shapes[i]);
    trainable = SaturatingAdd(trainable, row.params.trainable);
    non_trainable = SaturatingAdd(non_trainable, row.params.non_trainable);
    if (i > 1) out += rule + "\n";
    AppendRow(out, row.fields);
  }
  out += double_rule + "\n";
  absl::StrAppend(&out, "Total params: ",
                  WithCommas(SaturatingAdd(trainable, non_trainable)), "\n",
                  "Trainable params: ", WithCommas(trainable), "\n",
                  "Non-trainable params: ", WithCommas(non_trainable), "\n");
  out += rule + "\n";
  return out;
}

// ---------------------------------------------------------------------------
// Saving (models/saving_access.h)

namespace models_internal {

absl::StatusOr<ModelSnapshot> SavingAccess::Snapshot(const Sequential& model) {
  if (model.state_ == nullptr) return MovedFrom("Save");
  ModelState& m = *model.state_;
  // Save, SaveWeights, ModelToJson: safe points.
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  ModelSnapshot snap;
  snap.name = m.scope.name();
  snap.compiled = m.compiled;
  if (m.compiled) {
    snap.compile = {.optimizer = m.compile.optimizer,
                    .loss = m.compile.loss,
                    .metrics = m.compile.metrics};
  }
  snap.input = m.input;
  snap.output = m.output;
  std::vector<Output> reads;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const BuiltLayer* built = m.built[i];
    snap.layers.push_back({.layer = m.layers[i],
                           .state = m.layers[i].state_.get(),
                           .built = built});
    for (const Variable& v : built->variables) reads.push_back(v.read);
  }
  std::vector<Tensor> values;
  if (!reads.empty()) {
    GG_ASSIGN_OR_RETURN(values, m.session->Run({}, reads));
  }
  size_t k = 0;
  for (SavedLayer& layer : snap.layers) {
    for (const Variable& v : layer.built->variables) {
      // The reads share the variables' buffers, which training updates.
      GG_ASSIGN_OR_RETURN(Tensor copy, PrivateCopy(values[k++]));
      snap.variables[v.name] = copy;
      layer.values.push_back(std::move(copy));
    }
  }
  return snap;
}

absl::Status SavingAccess::AssignWeights(Sequential& model,
                                         std::vector<Tensor> values,
                                         const std::string& where) {
  if (model.state_ == nullptr) return MovedFrom("SetWeights");
  ModelState& m = *model.state_;
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  std::vector<const Variable*> vars;
  for (const BuiltLayer* layer : m.built) {
    for (const Variable& v : layer->variables) vars.push_back(&v);
  }
  if (values.size() != vars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the model has ", vars.size(), " weights, got ",
                     values.size()));
  }
  std::vector<std::pair<Output, Tensor>> feeds;
  std::vector<Output> targets;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (values[i].dtype() != DT_FLOAT || values[i].shape() != vars[i]->shape) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": weight ", i, " ('", vars[i]->name,
                       "') must be float ", vars[i]->shape.DebugString(),
                       ", got ", DataTypeString(values[i].dtype()), " ",
                       values[i].shape().DebugString()));
    }
    feeds.emplace_back(vars[i]->assign_value, std::move(values[i]));
    targets.push_back(vars[i]->assign);
  }
  if (targets.empty()) return absl::OkStatus();
  return m.session->Run(feeds, {}, targets).status();
}

}  // namespace models_internal
}  // namespace graphgc
