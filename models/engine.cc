#include "models/engine.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "models/batches.h"
#include "models/loss_registry.h"
#include "models/sample_weights.h"
#include "ops/gradients.h"
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
                       .metric_name = m.metric_name,
                       .labels = m.labels,
                       .sample_weight = m.sample_weight,
                       .loss = m.loss,
                       .accuracy = m.accuracy,
                       .eval_loss = m.eval_loss,
                       .eval_accuracy = m.eval_accuracy,
                       .train_op = m.train_op};
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
  if (model.inputs.size() != 1 || model.outputs.size() != 1) {
    return absl::UnimplementedError(absl::StrCat(
        options.where, ": the model has ", model.inputs.size(), " inputs and ",
        model.outputs.size(),
        " outputs; models of several inputs or outputs are not implemented "
        "yet (the engine trains one input and one output)"));
  }
  return CheckCalls(model, graph, options.where);
}

// BuildModel, step 2: the model's state, its scope reserved and its shapes
// recorded.
absl::StatusOr<std::shared_ptr<ModelState>> NewModelState(
    const ModelGraph& model, std::vector<Layer> layers, Graph& graph,
    const BuildOptions& options, std::vector<TensorShape> shapes) {
  const TensorShape& in = shapes[model.inputs[0]];
  const TensorShape& out = shapes[model.outputs[0]];
  // Input's shape was checked (a valid, fully known shape), as was every
  // layer's output: these counts cannot fail.
  absl::StatusOr<int64_t> in_dim = in.CheckedNumElements();
  absl::StatusOr<int64_t> out_dim = out.CheckedNumElements();
  GG_RETURN_IF_ERROR(in_dim.status());
  GG_RETURN_IF_ERROR(out_dim.status());

  auto m = std::make_shared<ModelState>();
  m->graph = &graph;
  m->scope = graph.ReserveScope(options.name.empty() ? options.default_name
                                                     : options.name);
  m->label = absl::StrCat(options.class_name, " '", m->scope.name(), "'");
  m->class_name = options.class_name;
  m->calls = model;
  m->layers = std::move(layers);
  m->session = std::make_unique<Session>(
      graph, SessionOptions{.intra_op_threads = options.intra_op_threads});
  m->input_shape = in;
  m->output_shape = out;
  m->in_dim = *in_dim;
  m->out_dim = *out_dim;
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

// One forward path's ends: the model's output, its logits when its last
// layer is a softmax, and the updates a training step also runs.
struct ForwardPath {
  Output output;
  std::optional<Output> softmax_logits;
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
  const int output = model.outputs[0];
  path.output = m.Own(values[output]);
  path.softmax_logits = logits[output];
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
  m->output = inference.output;
  m->softmax_logits = inference.softmax_logits;
  if (m->separate_training_path) {
    GG_ASSIGN_OR_RETURN(ForwardPath training,
                        BuildForwardPath(model, *m, /*training=*/true));
    m->train_output = training.output;
    m->train_softmax_logits = training.softmax_logits;
    m->train_updates = std::move(training.updates);
  } else {
    m->train_output = m->output;
    m->train_softmax_logits = m->softmax_logits;
  }
  m->input = m->Own(m->built[model.inputs[0]]->placeholder);
  return m;
}

namespace {

// CompileModel, step 1: the options' checks; returns the metric's name
// ("" for none).
absl::StatusOr<std::string> CheckCompileOptions(const ModelState& m,
                                                const CompileOptions& options) {
  if (FindOptimizerKind(options.optimizer) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Compile of '", m.scope.name(),
        "': no optimizer (use one of optimizers::", KnownOptimizers(), ")"));
  }
  if (absl::Status s = CheckLoss(options.loss).status(); !s.ok()) {
    return Annotate(s, absl::StrCat("Compile of '", m.scope.name(), "'"));
  }
  if (absl::Status s = CheckOptimizer(options.optimizer); !s.ok()) {
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
  return metric_name;
}

// The trainable variables the optimizer updates, in layer order.
struct Trainable {
  std::vector<Output> reads, vars;
  std::vector<TensorShape> shapes;
};

// CompileModel, step 2: the trainable variables, and the checks of the
// model itself.
absl::StatusOr<Trainable> CheckTrainable(const ModelState& m) {
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
  if (m.output_shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Compile of '", m.scope.name(), "': the model's output is ",
        KerasShape(m.output_shape),
        " but losses take (None, units) outputs; end the model with Flatten "
        "and Dense"));
  }
  return t;
}

// What CompileModel builds: the training path's loss and metrics,
// Evaluate's on the inference path, and the updates.
struct TrainingGraph {
  LossNodes loss;
  LossNodes eval;
  UpdateNodes updates;
};

// CompileModel, step 3: the loss, metric, gradient and update nodes.
absl::StatusOr<TrainingGraph> BuildTrainingGraph(ModelState& m,
                                                 const CompileOptions& options,
                                                 const Trainable& t,
                                                 bool with_accuracy) {
  const std::string scope = m.scope.name();
  TrainingGraph g;
  GG_ASSIGN_OR_RETURN(g.loss,
                      BuildLoss(options.loss,
                                {.output = m.train_output,
                                 .softmax_logits = m.train_softmax_logits,
                                 .units = m.units,
                                 .sample_weighted = true},
                                scope, with_accuracy));
  // Evaluate's loss and metrics, on the inference path, over the same
  // labels (the same nodes when the paths are the same).
  g.eval = g.loss;
  if (m.separate_training_path) {
    GG_ASSIGN_OR_RETURN(g.eval,
                        BuildLoss(options.loss,
                                  {.output = m.output,
                                   .softmax_logits = m.softmax_logits,
                                   .units = m.units,
                                   .labels = g.loss.labels,
                                   .sample_weighted = true,
                                   .sample_weight = g.loss.sample_weight},
                                  scope + "/inference", with_accuracy));
  }
  GG_ASSIGN_OR_RETURN(
      std::vector<Output> grads,
      AddGradients(g.loss.loss, t.reads, std::nullopt, scope + "/gradients"));
  std::vector<NodeHandle> after = {g.loss.loss.handle()};
  if (g.loss.accuracy.has_value()) after.push_back(g.loss.accuracy->handle());
  GG_ASSIGN_OR_RETURN(
      g.updates, BuildUpdates(options.optimizer, t.vars, t.shapes, grads, after,
                              scope, *m.session, m.train_updates));
  return g;
}

// CompileModel, step 4: the model takes the nodes; nothing fails.
void CommitCompile(ModelState& m, CompileOptions options,
                   std::string metric_name, const TrainingGraph& g)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(m.mu) {
  m.compile = std::move(options);
  m.metric_name = std::move(metric_name);
  m.labels = m.Own(g.loss.labels);
  // BuildLoss made it: the losses are built sample_weighted.
  if (g.loss.sample_weight.has_value()) {
    m.sample_weight = m.Own(*g.loss.sample_weight);
  }
  m.loss = m.Own(g.loss.loss);
  m.accuracy.reset();
  if (g.loss.accuracy.has_value()) m.accuracy = m.Own(*g.loss.accuracy);
  m.eval_loss = m.Own(g.eval.loss);
  m.eval_accuracy.reset();
  if (g.eval.accuracy.has_value()) m.eval_accuracy = m.Own(*g.eval.accuracy);
  m.train_op = m.Own(g.updates.train_op);
  const LearningRateNodes& lr = g.updates.learning_rate;
  m.learning_rate = {.variable = m.Own(lr.variable),
                     .read = m.Own(lr.read),
                     .assign_value = m.Own(lr.assign_value),
                     .assign = m.Own(lr.assign)};
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
  GG_ASSIGN_OR_RETURN(std::string metric_name, CheckCompileOptions(m, options));
  GG_ASSIGN_OR_RETURN(const Trainable trainable, CheckTrainable(m));
  GG_ASSIGN_OR_RETURN(
      const TrainingGraph g,
      BuildTrainingGraph(m, options, trainable, !metric_name.empty()));
  CommitCompile(m, std::move(options), std::move(metric_name), g);
  return absl::OkStatus();
}

absl::StatusOr<Logs> EvaluateOn(ModelState& m, const CompiledNodes& c,
                                const Tensor& x, const Tensor& y,
                                int batch_size, int64_t first_row,
                                int64_t count, const Tensor* sample_weight) {
  const int64_t n = count < 0 ? x.shape()[0] : count;
  std::vector<int64_t> rows(n);
  std::iota(rows.begin(), rows.end(), first_row);
  double loss_sum = 0, acc_sum = 0;
  std::vector<Output> fetches = {c.eval_loss};
  if (c.eval_accuracy.has_value()) fetches.push_back(*c.eval_accuracy);
  for (int64_t begin = 0; begin < n; begin += batch_size) {
    const int64_t end = std::min<int64_t>(n, begin + batch_size);
    absl::Span<const int64_t> batch(rows.data() + begin, end - begin);
    GG_ASSIGN_OR_RETURN(Tensor bx,
                        GatherRows(x, m.input_shape, m.in_dim, batch));
    GG_ASSIGN_OR_RETURN(Tensor by, GatherLabels(m, c.label_kind, y, batch));
    GG_ASSIGN_OR_RETURN(Tensor bw, GatherWeights(sample_weight, batch));
    GG_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        m.session->Run({{m.input, std::move(bx)},
                                        {c.labels, std::move(by)},
                                        {c.sample_weight, std::move(bw)}},
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

absl::StatusOr<std::map<std::string, float>> EvaluateModel(
    ModelState& m, const Tensor& x, const Tensor& y, int batch_size,
    const Tensor* sample_weight) {
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
  if (sample_weight != nullptr) {
    GG_RETURN_IF_ERROR(CheckSampleWeight(*sample_weight, n, where));
  }
  GG_ASSIGN_OR_RETURN(Logs logs, EvaluateOn(m, CompiledNodesOf(m), x, y,
                                            batch_size, 0, -1, sample_weight));
  return std::map<std::string, float>(logs.begin(), logs.end());
}

absl::StatusOr<Tensor> PredictModel(ModelState& m, const Tensor& x,
                                    int batch_size) {
  m.graph->collector().MaybeCollect();
  ModelCall call(m);
  const std::string where = absl::StrCat("Predict of '", m.scope.name(), "'");
  if (batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": batch_size must be >= 1, got ", batch_size));
  }
  GG_ASSIGN_OR_RETURN(const int64_t n, CheckX(m, x, where));
  // Every row is written below; a refused size allocates nothing.
  GG_ASSIGN_OR_RETURN(Tensor result,
                      NewTensor(DT_FLOAT, BatchShape(n, m.output_shape),
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

}  // namespace models_internal
}  // namespace graphgc
