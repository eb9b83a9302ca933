#include "models/sequential.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "models/engine.h"
#include "models/fit.h"
#include "models/layer_state.h"
#include "models/model_graph.h"
#include "models/optimizer_registry.h"
#include "models/saving_access.h"
#include "models/scheduled_learning_rate.h"
#include "models/summary.h"
#include "runtime/session.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
using models_internal::BuiltLayer;
using models_internal::LayerState;
using models_internal::ModelCall;
using models_internal::ModelState;

const std::vector<float>& History::values(const std::string& key) const {
  static const std::vector<float>* const kEmpty = new std::vector<float>();
  auto it = history.find(key);
  return it == history.end() ? *kEmpty : it->second;
}

namespace {

absl::Status MovedFrom(const char* method) {
  return absl::FailedPreconditionError(absl::StrCat(
      "Sequential::", method,
      ": the model was moved from (use the object it was moved to)"));
}

// A copy of `t` with a buffer of its own, so that what the model holds and
// what the caller holds can never change each other.
absl::StatusOr<Tensor> PrivateCopy(const Tensor& t) {
  return Tensor::FromData<float>(t.shape(), t.data<float>());
}

}  // namespace

namespace {

// Sequential's own checks of its stack of `layers` (their `states`), before
// the engine's: no layer empty, with bad options or twice; an Input first,
// and only first.
absl::Status CheckStack(
    const std::vector<Layer>& layers,
    const std::vector<std::shared_ptr<LayerState>>& states) {
  for (size_t i = 0; i < states.size(); ++i) {
    const LayerState* s = states[i].get();
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
    if (models_internal::TakesList(*s)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Sequential::Create: layer ", i, " is ", layers[i].kind(),
          ", a merge layer, which should be called on a list of inputs; "
          "merge layers go in a functional model"));
    }
    if (std::find(states.begin(), states.begin() + i, states[i]) !=
        states.begin() + i) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sequential::Create: layer ", i, " ('", layers[i].name(),
                       "') appears twice in the stack"));
    }
  }
  return absl::OkStatus();
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
  std::vector<std::shared_ptr<LayerState>> states;
  for (const Layer& layer : layers) states.push_back(layer.state_);
  GG_RETURN_IF_ERROR(CheckStack(layers, states));
  GG_ASSIGN_OR_RETURN(
      std::shared_ptr<ModelState> m,
      models_internal::BuildModel(
          models_internal::LinearGraph(std::move(states)), layers, graph,
          {.name = options.name,
           .default_name = "sequential",
           .class_name = "Sequential",
           .intra_op_threads = options.intra_op_threads,
           .where = "Sequential::Create"}));
  return Sequential(std::move(m));
}

absl::Status Sequential::Compile(CompileOptions options) {
  if (state_ == nullptr) return MovedFrom("Compile");
  return models_internal::CompileModel(*state_, std::move(options));
}

absl::StatusOr<History> Sequential::Fit(const Tensor& x, const Tensor& y,
                                        FitOptions options) {
  if (state_ == nullptr) return MovedFrom("Fit");
  return models_internal::FitModel(*state_, *this, x, y, std::move(options));
}

absl::StatusOr<std::map<std::string, float>> Sequential::Evaluate(
    const Tensor& x, const Tensor& y, int batch_size, int verbose) {
  if (state_ == nullptr) return MovedFrom("Evaluate");
  return models_internal::EvaluateModel(*state_, x, y, batch_size, std::nullopt,
                                        verbose);
}

absl::StatusOr<std::map<std::string, float>> Sequential::Evaluate(
    const Tensor& x, const Tensor& y, const Tensor& sample_weight,
    int batch_size, int verbose) {
  if (state_ == nullptr) return MovedFrom("Evaluate");
  return models_internal::EvaluateModel(*state_, x, y, batch_size,
                                        sample_weight, verbose);
}

absl::StatusOr<Tensor> Sequential::Predict(const Tensor& x, int batch_size,
                                           int verbose) {
  if (state_ == nullptr) return MovedFrom("Predict");
  return models_internal::PredictModel(*state_, x, batch_size, verbose);
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
  // Keras: a schedule's rate at the optimizer's step count.
  if (const std::optional<LearningRateSchedule>& schedule =
          m.compile.optimizer.learning_rate_schedule;
      schedule.has_value()) {
    GG_ASSIGN_OR_RETURN(const int64_t step, models_internal::ReadIterations(
                                                *m.session, m.iterations));
    return static_cast<float>(schedule->LearningRateAt(step));
  }
  GG_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                      m.session->Run({}, {m.learning_rate.read}));
  return out[0].data<float>()[0];
}

absl::StatusOr<int64_t> Sequential::iterations() const {
  if (state_ == nullptr) return MovedFrom("iterations");
  ModelState& m = *state_;
  ModelCall call(m);
  if (!m.compiled) {
    return absl::FailedPreconditionError(
        absl::StrCat("iterations of '", m.scope.name(),
                     "': the model is not compiled; call Compile first"));
  }
  return models_internal::ReadIterations(*m.session, m.iterations);
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
  if (m.compile.optimizer.learning_rate_schedule.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        where,
        ": This optimizer was created with a `LearningRateSchedule` object "
        "as its `learning_rate` constructor argument, hence its learning "
        "rate is not settable. If you need the learning rate to be "
        "settable, you should instantiate the optimizer with a float "
        "`learning_rate` argument."));
  }
  GG_RETURN_IF_ERROR(models_internal::AssignLearningRate(
      *m.session, m.learning_rate, learning_rate, where));
  // The compile settings follow the variable (what a save would record).
  if (const models_internal::OptimizerKind* kind =
          models_internal::FindOptimizerKind(m.compile.optimizer)) {
    *kind->learning_rate(m.compile.optimizer) = learning_rate;
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
    if (m.separate_training_path) roots.push_back(m.eval_loss.handle());
    for (const models_internal::OutputNodes& o : m.output_nodes) {
      for (const models_internal::MetricNode& n : o.metrics) {
        for (const Output& stat : n.stats) roots.push_back(stat.handle());
      }
      if (!m.separate_training_path) continue;
      for (const models_internal::MetricNode& n : o.eval_metrics) {
        for (const Output& stat : n.stats) roots.push_back(stat.handle());
      }
    }
  }
  for (const Output& out : m.outputs) roots.push_back(out.handle());
  if (m.separate_training_path) {
    for (const Output& out : m.train_outputs) roots.push_back(out.handle());
    roots.insert(roots.end(), m.train_updates.begin(), m.train_updates.end());
  }
  return roots;
}

std::string Sequential::Summary() const {
  if (state_ == nullptr) return "";
  ModelCall call(*state_);
  return models_internal::ModelSummary(*state_);
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
  snap.class_name = m.class_name;
  snap.graph = m.calls;
  snap.call_shapes = m.layer_shapes;
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
    // Each layer once: a layer called twice has one build.
    const BuiltLayer* built = m.layers[i].state_->built();
    if (built == nullptr) {
      return absl::InternalError(absl::StrCat(
          m.label, ": layer '", m.layers[i].name(), "' is not built"));
    }
    snap.layers.push_back({.layer = m.layers[i],
                           .state = m.layers[i].state_.get(),
                           .built = built});
    for (const Variable& v : built->variables) reads.push_back(v.read);
  }
  const size_t layer_reads = reads.size();
  if (m.compiled) {
    for (const auto& v : m.optimizer_state) reads.push_back(v.read);
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
  for (size_t i = layer_reads; i < values.size(); ++i) {
    // The iteration count is int64, the rest float.
    const Tensor& t = values[i];
    GG_ASSIGN_OR_RETURN(Tensor copy, t.dtype() == DT_INT64
                                         ? Tensor::FromData<int64_t>(
                                               t.shape(), t.data<int64_t>())
                                         : PrivateCopy(t));
    snap.optimizer_values.push_back(std::move(copy));
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
  for (const BuiltLayer* layer : m.weighted) {
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
