#include "models/engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <tuple>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "models/batches.h"
#include "models/loss_registry.h"
#include "models/metric_registry.h"
#include "models/model_data.h"
#include "models/sample_weights.h"
#include "ops/gradients.h"
#include "ops/ops.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

LabelKind LabelsOf(const Loss& loss) {
  const LossKind* kind = FindLossKind(loss.kind);
  return kind != nullptr && kind->sparse_labels ? LabelKind::kSparse
                                                : LabelKind::kDense;
}

CompiledNodes CompiledNodesOf(const ModelState& m) {
  return CompiledNodes{.label_kind = LabelsOf(m.compile.loss),
                       .labels = m.labels,
                       .sample_weight = m.sample_weight,
                       .loss = m.loss,
                       .eval_loss = m.eval_loss,
                       .train_op = m.train_op,
                       .outputs = m.output_nodes,
                       .metrics = AllMetrics(m.output_nodes, true),
                       .eval_metrics = AllMetrics(m.output_nodes, false)};
}

std::vector<MetricNode> AllMetrics(const std::vector<OutputNodes>& outputs,
                                   bool training) {
  std::vector<MetricNode> all;
  for (const OutputNodes& o : outputs) {
    const std::vector<MetricNode>& ms = training ? o.metrics : o.eval_metrics;
    all.insert(all.end(), ms.begin(), ms.end());
  }
  return all;
}

LogFetches LogFetchesOf(const CompiledNodes& c, bool training) {
  LogFetches f;
  f.nodes.push_back(training ? c.loss : c.eval_loss);
  f.keys.push_back("loss");
  // Keras 3 tracks each output's unweighted loss when several are trained.
  if (c.outputs.size() > 1) {
    for (const OutputNodes& o : c.outputs) {
      f.nodes.push_back(training ? o.loss_value : o.eval_loss);
      f.keys.push_back(o.prefix + "loss");
    }
  }
  return f;
}

absl::Status InOwnFit(const std::string& where) {
  return absl::FailedPreconditionError(
      absl::StrCat(where, ": called from a callback of the model's own Fit"));
}

absl::Status NoSamples(const std::string& where) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": no samples"));
}

namespace {

// BuildModel, step 1: the checks, before anything is built. Returns each
// call's per-sample value shape.
absl::StatusOr<std::vector<TensorShape>> CheckModel(
    const ModelGraph& model, Graph& graph, const BuildOptions& options) {
  GG_RETURN_IF_ERROR(CheckModelGraph(model, options.where));
  return CheckCalls(model, graph, options.where);
}

// BuildModel, step 2: the model's state, its scope reserved and its shapes
// recorded.
absl::StatusOr<std::shared_ptr<ModelState>> NewModelState(
    const ModelGraph& model, std::vector<Layer> layers, Graph& graph,
    const BuildOptions& options, std::vector<TensorShape> shapes) {
  auto m = std::make_shared<ModelState>();
  // Input's shape was checked (a valid, fully known shape), as was every
  // layer's output: these counts cannot fail.
  for (int in : model.inputs) {
    GG_ASSIGN_OR_RETURN(const int64_t dim, shapes[in].CheckedNumElements());
    m->input_shapes.push_back(shapes[in]);
    m->in_dims.push_back(dim);
  }
  for (int out : model.outputs) {
    GG_ASSIGN_OR_RETURN(const int64_t dim, shapes[out].CheckedNumElements());
    m->output_shapes.push_back(shapes[out]);
    m->out_dims.push_back(dim);
  }
  const TensorShape& out = m->output_shapes[0];
  m->graph = &graph;
  m->scope = graph.ReserveScope(options.name.empty() ? options.default_name
                                                     : options.name);
  m->label = absl::StrCat(options.class_name, " '", m->scope.name(), "'");
  m->class_name = options.class_name;
  m->calls = model;
  m->layers = std::move(layers);
  m->session = std::make_unique<Session>(
      graph, SessionOptions{.intra_op_threads = options.intra_op_threads});
  m->input_shape = m->input_shapes[0];
  m->output_shape = out;
  m->in_dim = m->in_dims[0];
  m->out_dim = m->out_dims[0];
  m->units = out[out.dims() - 1];
  m->layer_shapes = std::move(shapes);
  return m;
}

// BuildModel, step 3: every call's layer built (a no-op for a layer built
// before), in call order.
absl::Status BuildLayers(const ModelGraph& model, ModelState& m) {
  for (size_t c = 0; c < model.calls.size(); ++c) {
    LayerState& layer = *model.calls[c].layer;
    // A merge layer is built for its first input's shape.
    GG_RETURN_IF_ERROR(BuildLayer(
        layer, *m.graph,
        CallInputShapes(model, m.layer_shapes, static_cast<int>(c))[0],
        *m.session));
    const BuiltLayer* built = layer.built();
    if (built == nullptr) {
      return absl::InternalError(
          absl::StrCat("Create: ", LayerLabel(layer),
                       " is not built after BuildLayer succeeded"));
    }
    m.built.push_back(built);
    if (HasTrainingPath(layer)) m.separate_training_path = true;
    // A layer called twice has one set of weights.
    if (!built->variables.empty() &&
        std::find(m.weighted.begin(), m.weighted.end(), built) ==
            m.weighted.end()) {
      m.weighted.push_back(built);
    }
  }
  return absl::OkStatus();
}

// One forward path's ends: the model's outputs, each one's logits when its
// last layer is a softmax, and the updates a training step also runs.
struct ForwardPath {
  std::vector<Output> outputs;
  std::vector<std::optional<Output>> softmax_logits;
  std::vector<NodeHandle> updates;
};

// BuildModel, step 4: the forward nodes of every call (ApplyLayer, in call
// order), in training or inference mode.
absl::StatusOr<ForwardPath> BuildForwardPath(const ModelGraph& model,
                                             const ModelState& m,
                                             bool training) {
  std::vector<Output> values(model.calls.size());
  std::vector<std::optional<Output>> logits(model.calls.size());
  ForwardPath path;
  for (size_t c = 0; c < model.calls.size(); ++c) {
    const LayerCall& call = model.calls[c];
    if (call.inputs.empty()) {  // an Input
      values[c] = m.built[c]->placeholder;
      continue;
    }
    std::vector<Output> xs;
    xs.reserve(call.inputs.size());
    for (int in : call.inputs) xs.push_back(values[in]);
    GG_ASSIGN_OR_RETURN(LayerOutputs out,
                        ApplyLayerCall(*call.layer, xs, training));
    values[c] = out.output;
    if (out.softmax) logits[c] = m.Own(out.pre_activation);
    for (NodeHandle& u : out.updates) {
      path.updates.push_back(u.WithOwner(m.label));
    }
  }
  for (int output : model.outputs) {
    path.outputs.push_back(m.Own(values[output]));
    path.softmax_logits.push_back(logits[output]);
  }
  return path;
}

}  // namespace

absl::StatusOr<std::shared_ptr<ModelState>> BuildModel(
    const ModelGraph& model, std::vector<Layer> layers, Graph& graph,
    const BuildOptions& options) {
  GG_ASSIGN_OR_RETURN(std::vector<TensorShape> shapes,
                      CheckModel(model, graph, options));
  GG_ASSIGN_OR_RETURN(std::shared_ptr<ModelState> m,
                      NewModelState(model, std::move(layers), graph, options,
                                    std::move(shapes)));
  GG_RETURN_IF_ERROR(BuildLayers(model, *m));
  // The forward paths: inference, then (only when a layer needs it)
  // training.
  GG_ASSIGN_OR_RETURN(ForwardPath inference,
                      BuildForwardPath(model, *m, /*training=*/false));
  m->outputs = inference.outputs;
  m->outputs_softmax_logits = inference.softmax_logits;
  if (m->separate_training_path) {
    GG_ASSIGN_OR_RETURN(ForwardPath training,
                        BuildForwardPath(model, *m, /*training=*/true));
    m->train_outputs = std::move(training.outputs);
    m->train_outputs_softmax_logits = std::move(training.softmax_logits);
    m->train_updates = std::move(training.updates);
  } else {
    m->train_outputs = m->outputs;
    m->train_outputs_softmax_logits = m->outputs_softmax_logits;
  }
  m->output = m->outputs[0];
  m->softmax_logits = m->outputs_softmax_logits[0];
  m->train_output = m->train_outputs[0];
  m->train_softmax_logits = m->train_outputs_softmax_logits[0];
  // Keras names an input or output by its layer's name as given (graph
  // scopes unique it only when several models are built).
  auto name_of = [&](int call) {
    const std::string& requested = model.calls[call].layer->requested_name;
    return requested.empty() ? m->built[call]->name() : requested;
  };
  for (int in : model.inputs) {
    m->inputs.push_back(m->Own(m->built[in]->placeholder));
    m->input_names.push_back(name_of(in));
  }
  for (int out : model.outputs) m->output_names.push_back(name_of(out));
  m->input = m->inputs[0];
  return m;
}

namespace {

// One output's training, as Compile's options ask.
struct OutputPlan {
  int output = 0;
  Loss loss;
  double weight = 1.0;
  std::vector<Metric> metrics;
};

// A list option of the multi-output forms: empty, or one entry per output.
absl::Status OnePerOutput(const ModelState& m, size_t entries,
                          const char* what) {
  if (entries == 0 || entries == m.outputs.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Compile of '", m.scope.name(), "': ", what, " has ", entries,
      " entries but the model has ", m.outputs.size(), " outputs"));
}

// CompileModel, step 1: the options' checks; returns each trained output's
// loss, weight and metric, in output order.
absl::StatusOr<std::vector<OutputPlan>> CheckCompileOptions(
    const ModelState& m, const CompileOptions& options) {
  const std::string where = absl::StrCat("Compile of '", m.scope.name(), "'");
  if (FindOptimizerKind(options.optimizer) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": no optimizer (use one of optimizers::", KnownOptimizers(),
        ")"));
  }
  GG_RETURN_IF_ERROR(OnePerOutput(m, options.losses.size(), "losses"));
  GG_RETURN_IF_ERROR(
      OnePerOutput(m, options.loss_weights.size(), "loss_weights"));
  GG_RETURN_IF_ERROR(
      OnePerOutput(m, options.output_metrics.size(), "output_metrics"));
  std::vector<OutputPlan> plans;
  for (size_t o = 0; o < m.outputs.size(); ++o) {
    OutputPlan plan{
        .output = static_cast<int>(o),
        .loss = options.losses.empty() ? options.loss : options.losses[o]};
    // An output without a loss is not trained on (Keras's None).
    if (!options.losses.empty() && plan.loss.kind.empty()) continue;
    if (!options.loss_weights.empty()) plan.weight = options.loss_weights[o];
    if (!std::isfinite(plan.weight)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": loss_weights[", o, "] is ", plan.weight,
                       " (a finite number is needed)"));
    }
    plans.push_back(std::move(plan));
  }
  if (plans.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": no output has a loss"));
  }
  for (const OutputPlan& plan : plans) {
    if (absl::Status s = CheckLoss(plan.loss).status(); !s.ok()) {
      return Annotate(s, where);
    }
  }
  if (absl::Status s = CheckOptimizer(options.optimizer); !s.ok()) {
    return Annotate(s, where);
  }
  // Every output gets `metrics` and the configured metrics unless
  // `output_metrics` lists its own.
  for (OutputPlan& plan : plans) {
    plan.metrics = CompileMetrics(options.output_metrics.empty()
                                      ? options.metrics
                                      : options.output_metrics[plan.output],
                                  options.configured_metrics);
    const bool sparse = LabelsOf(plan.loss) == LabelKind::kSparse;
    for (const Metric& metric : plan.metrics) {
      if (absl::Status s = CheckMetric(metric, sparse).status(); !s.ok()) {
        return Annotate(s, where);
      }
    }
  }
  return plans;
}

// The trainable variables the optimizer updates, in layer order.
struct Trainable {
  std::vector<Output> reads, vars;
  std::vector<TensorShape> shapes;
};

// CompileModel, step 2: the trainable variables, and the checks of the
// model itself.
absl::StatusOr<Trainable> CheckTrainable(const ModelState& m,
                                         const std::vector<OutputPlan>& plans) {
  Trainable t;
  for (const BuiltLayer* layer : m.weighted) {
    for (const Variable& v : layer->variables) {
      if (!v.trainable) continue;
      t.reads.push_back(v.read);
      t.vars.push_back(v.handle);
      t.shapes.push_back(v.shape);
    }
  }
  if (t.vars.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Compile of '", m.scope.name(), "': the model has no trainable layer"));
  }
  for (const OutputPlan& plan : plans) {
    const TensorShape& shape = m.output_shapes[plan.output];
    if (shape.dims() == 1) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "Compile of '", m.scope.name(), "': the model's output",
        m.outputs.size() == 1
            ? std::string()
            : absl::StrCat(" '", m.output_names[plan.output], "'"),
        " is ", KerasShape(shape),
        " but losses take (None, units) outputs; end the model with Flatten "
        "and Dense"));
  }
  return t;
}

// What CompileModel builds: each trained output's loss and metric nodes
// (training and inference paths), the total losses, and the updates.
struct TrainingGraph {
  std::vector<OutputNodes> outputs;
  // float [batch], shared by every output's loss: the first one's
  // BuildLoss makes it.
  std::optional<Output> sample_weight;
  Output loss;
  Output eval_loss;
  UpdateNodes updates;
};

// `weight` times `loss`, plus `sum` when it has a value: one step of the
// total loss's sum, nodes named "<scope>/total_loss_<o>...".
absl::StatusOr<Output> AddWeighted(const std::optional<Output>& sum,
                                   const Output& loss, double weight,
                                   const std::string& name) {
  Output term = loss;
  if (weight != 1.0) {
    GG_ASSIGN_OR_RETURN(
        Output w, ops::ScalarLike(loss, weight, {.name = name + "/weight"}));
    GG_ASSIGN_OR_RETURN(term, ops::Mul(loss, w, {.name = name + "/weighted"}));
  }
  if (!sum.has_value()) return term;
  return ops::Add(*sum, term, {.name = name + "/sum"});
}

// CompileModel, step 3: the loss, metric, gradient and update nodes.
absl::StatusOr<TrainingGraph> BuildTrainingGraph(
    ModelState& m, const CompileOptions& options, const Trainable& t,
    const std::vector<OutputPlan>& plans) {
  const std::string scope = m.scope.name();
  const bool several = m.outputs.size() > 1;
  TrainingGraph g;
  std::optional<Output> total, eval_total;
  for (const OutputPlan& plan : plans) {
    const int o = plan.output;
    // A model of one output keeps its loss under "<model>/loss".
    const std::string out_scope =
        several ? absl::StrCat(scope, "/output_", o) : scope;
    const int64_t units = m.output_shapes[o][m.output_shapes[o].dims() - 1];
    GG_ASSIGN_OR_RETURN(
        LossNodes loss,
        BuildLoss(plan.loss,
                  {.output = m.train_outputs[o],
                   .softmax_logits = m.train_outputs_softmax_logits[o],
                   .units = units,
                   .sample_weighted = true,
                   .sample_weight = g.sample_weight},
                  out_scope, /*with_accuracy=*/false));
    g.sample_weight = loss.sample_weight;
    const std::string prefix =
        several ? m.output_names[o] + "_" : std::string();
    const bool sparse = LabelsOf(plan.loss) == LabelKind::kSparse;
    GG_ASSIGN_OR_RETURN(
        std::vector<MetricNode> metrics,
        BuildMetrics(plan.metrics,
                     {.output = m.train_outputs[o],
                      .softmax_logits = m.train_outputs_softmax_logits[o],
                      .units = units,
                      .labels = loss.labels,
                      .sparse_labels = sparse},
                     out_scope, prefix));
    // Evaluate's loss and metrics, on the inference path, over the same
    // labels (the same nodes when the paths are the same).
    LossNodes eval = loss;
    std::vector<MetricNode> eval_metrics = metrics;
    if (m.separate_training_path) {
      GG_ASSIGN_OR_RETURN(
          eval_metrics,
          BuildMetrics(plan.metrics,
                       {.output = m.outputs[o],
                        .softmax_logits = m.outputs_softmax_logits[o],
                        .units = units,
                        .labels = loss.labels,
                        .sparse_labels = sparse},
                       out_scope + "/inference", prefix));
      GG_ASSIGN_OR_RETURN(
          eval, BuildLoss(plan.loss,
                          {.output = m.outputs[o],
                           .softmax_logits = m.outputs_softmax_logits[o],
                           .units = units,
                           .labels = loss.labels,
                           .sample_weighted = true,
                           .sample_weight = g.sample_weight},
                          out_scope + "/inference", false));
    }
    const std::string total_name = absl::StrCat(scope, "/total_loss_", o);
    GG_ASSIGN_OR_RETURN(Output sum,
                        AddWeighted(total, loss.loss, plan.weight, total_name));
    total = sum;
    if (m.separate_training_path) {
      GG_ASSIGN_OR_RETURN(sum, AddWeighted(eval_total, eval.loss, plan.weight,
                                           total_name + "/inference"));
    }
    eval_total = sum;
    g.outputs.push_back(OutputNodes{.output = o,
                                    .prefix = prefix,
                                    .loss = plan.loss,
                                    .label_kind = LabelsOf(plan.loss),
                                    .units = units,
                                    .labels = loss.labels,
                                    .loss_value = loss.loss,
                                    .eval_loss = eval.loss,
                                    .metrics = std::move(metrics),
                                    .eval_metrics = std::move(eval_metrics)});
  }
  // plans is not empty (CheckCompileOptions).
  g.loss = *total;
  g.eval_loss = *eval_total;
  GG_ASSIGN_OR_RETURN(
      std::vector<Output> grads,
      AddGradients(g.loss, t.reads, std::nullopt, scope + "/gradients"));
  // The step's logs read the losses and metrics before the update.
  std::vector<NodeHandle> after = {g.loss.handle()};
  for (const OutputNodes& o : g.outputs) {
    if (plans.size() > 1) after.push_back(o.loss_value.handle());
    for (const MetricNode& n : o.metrics) {
      for (const Output& stat : n.stats) after.push_back(stat.handle());
    }
  }
  GG_ASSIGN_OR_RETURN(
      g.updates, BuildUpdates(options.optimizer, t.vars, t.shapes, grads, after,
                              scope, *m.session, m.train_updates));
  return g;
}

std::vector<MetricNode> OwnMetrics(const ModelState& m,
                                   std::vector<MetricNode> nodes) {
  for (MetricNode& n : nodes) {
    for (Output& o : n.stats) o = m.Own(o);
  }
  return nodes;
}

// CompileModel, step 4: the model takes the nodes; nothing fails.
void CommitCompile(ModelState& m, CompileOptions options, TrainingGraph g)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(m.mu) {
  for (OutputNodes& o : g.outputs) {
    o.labels = m.Own(o.labels);
    o.loss_value = m.Own(o.loss_value);
    o.eval_loss = m.Own(o.eval_loss);
    o.metrics = OwnMetrics(m, std::move(o.metrics));
    o.eval_metrics = OwnMetrics(m, std::move(o.eval_metrics));
  }
  const OutputNodes& first = g.outputs[0];
  if (!options.losses.empty()) options.loss = first.loss;
  m.compile = std::move(options);
  m.labels = first.labels;
  // The first output's BuildLoss made it (every loss is sample_weighted).
  m.sample_weight = m.Own(*g.sample_weight);
  m.loss = m.Own(g.loss);
  m.eval_loss = m.Own(g.eval_loss);
  m.output_nodes = std::move(g.outputs);
  m.train_op = m.Own(g.updates.train_op);
  const LearningRateNodes& lr = g.updates.learning_rate;
  m.learning_rate = {.variable = m.Own(lr.variable),
                     .read = m.Own(lr.read),
                     .assign_value = m.Own(lr.assign_value),
                     .assign = m.Own(lr.assign)};
  m.iterations = m.Own(g.updates.iterations_read);
  m.optimizer_state.clear();
  for (const OptimizerVariable& v : g.updates.state) {
    m.optimizer_state.push_back({.variable = m.Own(v.variable),
                                 .read = m.Own(v.read),
                                 .dtype = v.dtype,
                                 .shape = v.shape});
  }
  m.optimizer_step_powers.clear();
  for (const StepPowerVariable& p : g.updates.step_powers) {
    m.optimizer_step_powers.push_back(
        {.variable = m.Own(p.variable), .base = p.base});
  }
  m.compiled = true;
}

}  // namespace

absl::Status CompileModel(ModelState& m, CompileOptions options) {
  // A safe point, before the model's lock (collect listeners never need it).
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  if (m.fitting.has_value()) {  // called from a callback of its own Fit
    return InOwnFit(absl::StrCat("Compile of '", m.scope.name(), "'"));
  }
  GG_ASSIGN_OR_RETURN(const std::vector<OutputPlan> plans,
                      CheckCompileOptions(m, options));
  GG_ASSIGN_OR_RETURN(const Trainable trainable, CheckTrainable(m, plans));
  GG_ASSIGN_OR_RETURN(TrainingGraph g,
                      BuildTrainingGraph(m, options, trainable, plans));
  CommitCompile(m, std::move(options), std::move(g));
  return absl::OkStatus();
}

absl::StatusOr<Logs> EvaluateOn(ModelState& m, const CompiledNodes& c,
                                const ModelData& data, int batch_size,
                                int64_t first_row, int64_t count,
                                callbacks::ProgressBar* progress) {
  const int64_t n = count < 0 ? data.samples : count;
  std::vector<int64_t> rows(n);
  std::iota(rows.begin(), rows.end(), first_row);
  const LogFetches f = LogFetchesOf(c, /*training=*/false);
  std::vector<double> sums(f.nodes.size(), 0.0);
  std::vector<Output> fetches = f.nodes;
  MetricTotals::AppendFetches(c.eval_metrics, fetches);
  MetricTotals metrics(&c.eval_metrics);
  Feeds feeds = FeedSlots(m, c, data);
  for (int64_t begin = 0; begin < n; begin += batch_size) {
    const int64_t end = std::min<int64_t>(n, begin + batch_size);
    absl::Span<const int64_t> batch(rows.data() + begin, end - begin);
    GG_RETURN_IF_ERROR(GatherBatchInto(m, c, data, batch, feeds));
    GG_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        m.session->Run(feeds, fetches));
    for (size_t k = 0; k < sums.size(); ++k) {
      sums[k] += out[k].data<float>()[0] * (end - begin);
    }
    metrics.Add(out, sums.size());
    if (progress != nullptr) {
      // The batch's own values, which the bar averages by size (as Fit's).
      Logs batch_logs;
      for (size_t k = 0; k < sums.size(); ++k) {
        batch_logs[f.keys[k]] = out[k].data<float>()[0];
      }
      MetricTotals batch_metrics(&c.eval_metrics);
      batch_metrics.Add(out, sums.size());
      batch_metrics.Results(batch_logs);
      batch_logs["size"] = static_cast<float>(end - begin);
      GG_RETURN_IF_ERROR(progress->OnBatchEnd(begin / batch_size, batch_logs));
    }
  }
  // n > 0: callers refuse empty data.
  Logs logs;
  for (size_t k = 0; k < sums.size(); ++k) {
    logs[f.keys[k]] = static_cast<float>(sums[k] / n);
  }
  metrics.Results(logs);
  if (progress != nullptr) GG_RETURN_IF_ERROR(progress->OnEpochEnd(0, logs));
  return logs;
}

namespace {

// Evaluate's and Predict's progress bar over the batches of `samples` rows
// (Keras's ProgbarLogger outside fit): none with verbose 0.
absl::StatusOr<std::unique_ptr<callbacks::ProgressBar>> RunProgressBar(
    int verbose, int64_t samples, int batch_size, const std::string& where) {
  if (verbose < 0 || verbose > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": verbose must be 0, 1 or 2, got ", verbose));
  }
  if (verbose == 0) return nullptr;
  auto bar = std::make_unique<callbacks::ProgressBar>(
      callbacks::ProgressBarOptions{.redraw = verbose == 1 ? -1 : 0});
  bar->BeginRun(samples / batch_size + (samples % batch_size != 0), verbose);
  return bar;
}

}  // namespace

Feeds FeedSlots(const ModelState& m, const CompiledNodes& c,
                const ModelData& data) {
  Feeds feeds;
  feeds.reserve(data.x.size() + data.labels.size() + 1);
  // The tensors are made in place: g++ 12 at -O1 (the TSan build) took
  // moving a default Tensor's inline shape storage for a read of
  // uninitialised memory (-Wmaybe-uninitialized).
  auto slot = [&](const Output& node) {
    feeds.emplace_back(std::piecewise_construct, std::forward_as_tuple(node),
                       std::forward_as_tuple());
  };
  for (size_t i = 0; i < data.x.size(); ++i) slot(m.inputs[i]);
  for (size_t k = 0; k < data.labels.size(); ++k) slot(c.outputs[k].labels);
  if (!data.labels.empty()) slot(c.sample_weight);
  return feeds;
}

absl::Status GatherBatchInto(const ModelState& m, const CompiledNodes& c,
                             const ModelData& data,
                             absl::Span<const int64_t> rows, Feeds& feeds) {
  size_t f = 0;
  for (size_t i = 0; i < data.x.size(); ++i) {
    GG_ASSIGN_OR_RETURN(
        feeds[f++].second,
        GatherRows(data.x[i], m.input_shapes[i], m.in_dims[i], rows));
  }
  for (size_t k = 0; k < data.labels.size(); ++k) {
    const OutputNodes& o = c.outputs[k];
    GG_ASSIGN_OR_RETURN(feeds[f++].second, GatherLabels(o.label_kind, o.units,
                                                        data.labels[k], rows));
  }
  if (!data.labels.empty()) {
    const Tensor* w =
        data.sample_weight.has_value() ? &*data.sample_weight : nullptr;
    GG_ASSIGN_OR_RETURN(feeds[f++].second, GatherWeights(w, rows));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, float>> EvaluateModel(
    ModelState& m, const Tensor& x, const Tensor& y, int batch_size,
    std::optional<Tensor> sample_weight, int verbose) {
  return EvaluateModel(m, std::vector<Tensor>{x}, std::vector<Tensor>{y},
                       batch_size, std::move(sample_weight), verbose);
}

absl::StatusOr<std::map<std::string, float>> EvaluateModel(
    ModelState& m, std::vector<Tensor> xs, std::vector<Tensor> ys,
    int batch_size, std::optional<Tensor> sample_weight, int verbose) {
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
  const CompiledNodes c = CompiledNodesOf(m);
  GG_ASSIGN_OR_RETURN(const ModelData data,
                      CheckData(m, c.outputs, std::move(xs), std::move(ys),
                                where, std::move(sample_weight)));
  if (data.samples == 0) return NoSamples(where);
  GG_ASSIGN_OR_RETURN(const std::unique_ptr<callbacks::ProgressBar> bar,
                      RunProgressBar(verbose, data.samples, batch_size, where));
  GG_ASSIGN_OR_RETURN(Logs logs,
                      EvaluateOn(m, c, data, batch_size, 0, -1, bar.get()));
  return std::map<std::string, float>(logs.begin(), logs.end());
}

absl::StatusOr<Tensor> PredictModel(ModelState& m, const Tensor& x,
                                    int batch_size, int verbose) {
  GG_ASSIGN_OR_RETURN(
      std::vector<Tensor> out,
      PredictModel(m, std::vector<Tensor>{x}, batch_size, verbose));
  return std::move(out[0]);
}

absl::StatusOr<std::vector<Tensor>> PredictModel(ModelState& m,
                                                 std::vector<Tensor> xs,
                                                 int batch_size, int verbose) {
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  const std::string where = absl::StrCat("Predict of '", m.scope.name(), "'");
  if (batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": batch_size must be >= 1, got ", batch_size));
  }
  GG_ASSIGN_OR_RETURN(const ModelData data,
                      CheckInputs(m, std::move(xs), where));
  const int64_t n = data.samples;
  GG_ASSIGN_OR_RETURN(const std::unique_ptr<callbacks::ProgressBar> bar,
                      RunProgressBar(verbose, n, batch_size, where));
  // Every row is written below; a refused size allocates nothing.
  std::vector<Tensor> results;
  for (size_t o = 0; o < m.outputs.size(); ++o) {
    GG_ASSIGN_OR_RETURN(
        Tensor result,
        NewTensor(DT_FLOAT, BatchShape(n, m.output_shapes[o]),
                  /*zero=*/false,
                  m.outputs.size() == 1
                      ? where + ": the predictions"
                      : absl::StrCat(where, ": the predictions of output '",
                                     m.output_names[o], "'")));
    results.push_back(std::move(result));
  }
  std::vector<int64_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0);
  const CompiledNodes none;  // no labels are fed
  Feeds feeds = FeedSlots(m, none, data);
  for (int64_t begin = 0; begin < n; begin += batch_size) {
    const int64_t end = std::min<int64_t>(n, begin + batch_size);
    absl::Span<const int64_t> batch(rows.data() + begin, end - begin);
    GG_RETURN_IF_ERROR(GatherBatchInto(m, none, data, batch, feeds));
    GG_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        m.session->Run(feeds, m.outputs));
    for (size_t o = 0; o < out.size(); ++o) {
      // The result's size was checked above, so these products fit.
      std::memcpy(
          results[o].mutable_data<float>().data() + begin * m.out_dims[o],
          out[o].data<float>().data(),
          (end - begin) * m.out_dims[o] * sizeof(float));
    }
    if (bar != nullptr) {
      GG_RETURN_IF_ERROR(bar->OnBatchEnd(
          begin / batch_size, {{"size", static_cast<float>(end - begin)}}));
    }
  }
  // No samples: no steps, so no bar.
  if (bar != nullptr && n > 0) GG_RETURN_IF_ERROR(bar->OnEpochEnd(0, {}));
  return results;
}

}  // namespace models_internal
}  // namespace graphgc
