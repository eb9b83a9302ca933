#include "models/functional.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/engine.h"
#include "models/fit.h"
#include "models/layer_registry.h"
#include "models/layer_state.h"
#include "models/model_graph.h"
#include "models/model_state.h"
#include "models/saving_access.h"
#include "models/summary.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

// One layer call on symbolic values; immutable once made.
struct SymbolicCall {
  std::shared_ptr<LayerState> layer;
  std::vector<KerasTensor> inputs;
  TensorShape shape;    // per sample
  absl::Status status;  // why the call was refused
};

// What this file reads of Layer and KerasTensor, and makes of them.
struct SymbolicAccess {
  static std::shared_ptr<LayerState> State(const Layer& layer) {
    return layer.state_;
  }
  static const SymbolicCall* Call(const KerasTensor& t) {
    return t.call_.get();
  }
  // A call of `layer` on `inputs`, with its shape or why it was refused.
  static KerasTensor Make(std::shared_ptr<LayerState> layer,
                          std::vector<KerasTensor> inputs,
                          absl::StatusOr<TensorShape> shape) {
    auto call = std::make_shared<SymbolicCall>();
    call->layer = std::move(layer);
    call->inputs = std::move(inputs);
    if (shape.ok()) {
      call->shape = *std::move(shape);
    } else {
      call->status = shape.status();
    }
    return KerasTensor(std::move(call));
  }
};

}  // namespace models_internal

using models_internal::LayerState;
using models_internal::ModelCall;
using models_internal::ModelGraph;
using models_internal::ModelState;
using models_internal::SymbolicCall;

namespace {

const TensorShape& NoShape() {
  static const TensorShape* const kNone = new TensorShape();
  return *kNone;
}

absl::Status MovedFrom(const char* method) {
  return absl::FailedPreconditionError(absl::StrCat(
      "Functional::", method,
      ": the model was moved from (use the object it was moved to)"));
}

// Why a call of `layer` on `xs` (given as a list or not) is refused, or
// its output shape.
absl::StatusOr<TensorShape> CallShape(const LayerState* layer,
                                      const std::vector<KerasTensor>& xs,
                                      bool list) {
  if (layer == nullptr) {
    return absl::InvalidArgumentError(
        "a layer call: the layer is empty (default-constructed or moved "
        "from)");
  }
  GG_RETURN_IF_ERROR(layer->error);
  const std::string label = models_internal::LayerLabel(*layer);
  if (models_internal::IsInputLayer(*layer)) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, " is not called on values; use Input() for a model's input"));
  }
  std::vector<TensorShape> shapes;
  for (size_t i = 0; i < xs.size(); ++i) {
    absl::Status s = xs[i].status();
    if (!s.ok()) return s;
    shapes.push_back(xs[i].shape());
  }
  if (models_internal::TakesList(*layer) && !list) {
    return absl::InvalidArgumentError(absl::StrCat(
        label,
        ": A merge layer should be called on a list of inputs. Received: "
        "input_shape=",
        models_internal::KerasShape(shapes[0]), " (not a list of shapes)"));
  }
  if (!models_internal::TakesList(*layer) && list) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, " takes one value, not a list of ", xs.size()));
  }
  return models_internal::CallOutputShape(*layer, shapes);
}

}  // namespace

const TensorShape& KerasTensor::shape() const {
  return call_ == nullptr ? NoShape() : call_->shape;
}

Layer KerasTensor::layer() const {
  return call_ == nullptr ? Layer() : MakeLayer(call_->layer);
}

absl::Status KerasTensor::status() const {
  if (call_ == nullptr) {
    return absl::InvalidArgumentError(
        "an empty KerasTensor (default-constructed or moved from)");
  }
  return call_->status;
}

KerasTensor Layer::operator()(const KerasTensor& x) const {
  return models_internal::SymbolicAccess::Make(
      state_, {x}, CallShape(state_.get(), {x}, /*list=*/false));
}

KerasTensor Layer::operator()(const std::vector<KerasTensor>& xs) const {
  if (xs.empty()) {
    return models_internal::SymbolicAccess::Make(
        state_, xs,
        absl::InvalidArgumentError(absl::StrCat(
            state_ == nullptr ? std::string("an empty layer")
                              : models_internal::LayerLabel(*state_),
            " is called on an empty list of values")));
  }
  return models_internal::SymbolicAccess::Make(
      state_, xs, CallShape(state_.get(), xs, /*list=*/true));
}

KerasTensor Input(TensorShape shape, std::string name) {
  std::shared_ptr<LayerState> layer = models_internal::SymbolicAccess::State(
      layers::Input(shape, std::move(name)));
  absl::Status error = layer->error;
  if (!error.ok()) {
    return models_internal::SymbolicAccess::Make(std::move(layer), {}, error);
  }
  return models_internal::SymbolicAccess::Make(std::move(layer), {},
                                               std::move(shape));
}

namespace {

// The graph of calls from `inputs` to `outputs`: the inputs first, then
// every call the outputs reach, each after the calls it reads.
class GraphBuilder {
 public:
  absl::StatusOr<ModelGraph> Build(const std::vector<KerasTensor>& inputs,
                                   const std::vector<KerasTensor>& outputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const SymbolicCall* c = Call(inputs[i]);
      GG_RETURN_IF_ERROR(Usable(inputs[i], "input", i));
      if (!c->inputs.empty() || !models_internal::IsInputLayer(*c->layer)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Functional::Create: input ", i,
                         " is not a value made by Input() but one of ",
                         models_internal::LayerLabel(*c->layer)));
      }
      if (index_.count(c) > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Functional::Create: input ", i, " is listed twice"));
      }
      Add(c);
      graph_.inputs.push_back(index_[c]);
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      GG_RETURN_IF_ERROR(Usable(outputs[o], "output", o));
      GG_RETURN_IF_ERROR(Visit(Call(outputs[o]), o));
      graph_.outputs.push_back(index_[Call(outputs[o])]);
    }
    return std::move(graph_);
  }

 private:
  static const SymbolicCall* Call(const KerasTensor& t) {
    return models_internal::SymbolicAccess::Call(t);
  }

  static absl::Status Usable(const KerasTensor& t, const char* what, size_t i) {
    absl::Status s = t.status();
    if (s.ok()) return s;
    return absl::Status(s.code(), absl::StrCat("Functional::Create: ", what,
                                               " ", i, ": ", s.message()));
  }

  void Add(const SymbolicCall* c) {
    index_[c] = static_cast<int>(graph_.calls.size());
    models_internal::LayerCall call{.layer = c->layer};
    for (const KerasTensor& in : c->inputs) {
      call.inputs.push_back(index_[Call(in)]);
    }
    graph_.calls.push_back(std::move(call));
  }

  // Adds `root` after every call it reads (depth first, without recursion:
  // a deep model does not grow the stack).
  absl::Status Visit(const SymbolicCall* root, size_t output) {
    std::vector<std::pair<const SymbolicCall*, size_t>> stack = {{root, 0}};
    while (!stack.empty()) {
      auto& [c, next] = stack.back();
      if (index_.count(c) > 0) {
        stack.pop_back();
        continue;
      }
      if (c->inputs.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Functional::Create: output ", output, " depends on ",
            models_internal::LayerLabel(*c->layer),
            ", which is not one of the model's inputs (graph disconnected)"));
      }
      if (next < c->inputs.size()) {
        const SymbolicCall* in = Call(c->inputs[next++]);
        if (index_.count(in) == 0) stack.emplace_back(in, 0);
        continue;
      }
      Add(c);
      stack.pop_back();
    }
    return absl::OkStatus();
  }

  ModelGraph graph_;
  std::map<const SymbolicCall*, int> index_;
};

}  // namespace

absl::StatusOr<Functional> Functional::Create(std::vector<KerasTensor> inputs,
                                              std::vector<KerasTensor> outputs,
                                              FunctionalOptions options) {
  Graph& graph = options.graph != nullptr ? *options.graph : Graph::Default();
  // A safe point: no model is built or run by this call yet.
  graph.collector().MaybeCollect();
  GG_ASSIGN_OR_RETURN(ModelGraph calls, GraphBuilder().Build(inputs, outputs));
  std::vector<Layer> layers;
  std::vector<const LayerState*> seen;
  for (const models_internal::LayerCall& c : calls.calls) {
    if (std::find(seen.begin(), seen.end(), c.layer.get()) != seen.end()) {
      continue;
    }
    seen.push_back(c.layer.get());
    layers.push_back(MakeLayer(c.layer));
  }
  GG_ASSIGN_OR_RETURN(
      std::shared_ptr<ModelState> m,
      models_internal::BuildModel(calls, std::move(layers), graph,
                                  {.name = options.name,
                                   .default_name = "functional",
                                   .class_name = "Functional",
                                   .intra_op_threads = options.intra_op_threads,
                                   .where = "Functional::Create"}));
  return Functional(std::move(m), std::move(inputs), std::move(outputs));
}

Functional::Functional(std::shared_ptr<ModelState> state,
                       std::vector<KerasTensor> inputs,
                       std::vector<KerasTensor> outputs)
    : state_(std::move(state)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)) {}

absl::Status Functional::Compile(CompileOptions options) {
  if (state_ == nullptr) return MovedFrom("Compile");
  return Engine().Compile(std::move(options));
}

absl::StatusOr<History> Functional::Fit(const Tensor& x, const Tensor& y,
                                        FitOptions options) {
  if (state_ == nullptr) return MovedFrom("Fit");
  return Engine().Fit(x, y, std::move(options));
}

absl::StatusOr<std::map<std::string, float>> Functional::Evaluate(
    const Tensor& x, const Tensor& y, int batch_size, int verbose) {
  if (state_ == nullptr) return MovedFrom("Evaluate");
  return Engine().Evaluate(x, y, batch_size, verbose);
}

absl::StatusOr<std::map<std::string, float>> Functional::Evaluate(
    const Tensor& x, const Tensor& y, const Tensor& sample_weight,
    int batch_size, int verbose) {
  if (state_ == nullptr) return MovedFrom("Evaluate");
  return Engine().Evaluate(x, y, sample_weight, batch_size, verbose);
}

absl::StatusOr<Tensor> Functional::Predict(const Tensor& x, int batch_size,
                                           int verbose) {
  if (state_ == nullptr) return MovedFrom("Predict");
  return Engine().Predict(x, batch_size, verbose);
}

absl::StatusOr<History> Functional::Fit(std::vector<Tensor> x,
                                        std::vector<Tensor> y,
                                        FitOptions options) {
  if (state_ == nullptr) return MovedFrom("Fit");
  return models_internal::FitModel(*state_, Engine(), std::move(x),
                                   std::move(y), std::move(options));
}

absl::StatusOr<std::map<std::string, float>> Functional::Evaluate(
    std::vector<Tensor> x, std::vector<Tensor> y, int batch_size, int verbose) {
  if (state_ == nullptr) return MovedFrom("Evaluate");
  return models_internal::EvaluateModel(*state_, std::move(x), std::move(y),
                                        batch_size, std::nullopt, verbose);
}

absl::StatusOr<std::map<std::string, float>> Functional::Evaluate(
    std::vector<Tensor> x, std::vector<Tensor> y, const Tensor& sample_weight,
    int batch_size, int verbose) {
  if (state_ == nullptr) return MovedFrom("Evaluate");
  return models_internal::EvaluateModel(*state_, std::move(x), std::move(y),
                                        batch_size, sample_weight, verbose);
}

absl::StatusOr<std::vector<Tensor>> Functional::Predict(std::vector<Tensor> x,
                                                        int batch_size,
                                                        int verbose) {
  if (state_ == nullptr) return MovedFrom("Predict");
  return models_internal::PredictModel(*state_, std::move(x), batch_size,
                                       verbose);
}

std::vector<std::string> Functional::input_names() const {
  if (state_ == nullptr) return {};
  return state_->input_names;
}

std::vector<std::string> Functional::output_names() const {
  if (state_ == nullptr) return {};
  return state_->output_names;
}

std::vector<Tensor> Functional::GetWeights() const {
  if (state_ == nullptr) return {};
  return Engine().GetWeights();
}

absl::Status Functional::SetWeights(const std::vector<Tensor>& weights) {
  if (state_ == nullptr) return MovedFrom("SetWeights");
  return Engine().SetWeights(weights);
}

std::string Functional::Summary() const {
  if (state_ == nullptr) return "";
  ModelCall call(*state_);
  return models_internal::ModelSummary(*state_);
}

const std::string& Functional::name() const {
  static const std::string* const kNoName = new std::string();
  return state_ == nullptr ? *kNoName : state_->scope.name();
}

const std::vector<Layer>& Functional::layers() const {
  static const std::vector<Layer>* const kNoLayers = new std::vector<Layer>();
  return state_ == nullptr ? *kNoLayers : state_->layers;
}

Sequential models_internal::SavingAccess::Handle(const Functional& model) {
  return model.Engine();
}

bool Functional::compiled() const {
  return state_ != nullptr && Engine().compiled();
}

std::vector<NodeHandle> Functional::GraphRoots() const {
  if (state_ == nullptr) return {};
  return Engine().GraphRoots();
}

}  // namespace graphgc
