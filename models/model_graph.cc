#include "models/model_graph.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

namespace {

bool IsInput(const LayerState& layer) { return IsInputLayer(layer); }

bool Contains(const std::vector<int>& list, int value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// `list` (the model's "inputs" or "outputs") names calls, none twice.
absl::Status CheckCallList(const ModelGraph& model,
                           const std::vector<int>& list, const char* what,
                           const std::string& where) {
  if (list.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the model has no ", what));
  }
  const int calls = static_cast<int>(model.calls.size());
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] < 0 || list[i] >= calls) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": ", what, " ", i, " names call ", list[i], " of ", calls));
    }
    if (std::find(list.begin(), list.begin() + i, list[i]) !=
        list.begin() + i) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": ", what, " ", i, " names call ", list[i], " twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

ModelGraph LinearGraph(std::vector<std::shared_ptr<LayerState>> layers) {
  ModelGraph model;
  model.calls.reserve(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerCall call{.layer = std::move(layers[i])};
    if (i > 0) call.inputs.push_back(static_cast<int>(i) - 1);
    model.calls.push_back(std::move(call));
  }
  if (!model.calls.empty()) {
    model.inputs = {0};
    model.outputs = {static_cast<int>(model.calls.size()) - 1};
  }
  return model;
}

absl::Status CheckModelGraph(const ModelGraph& model,
                             const std::string& where) {
  GG_RETURN_IF_ERROR(CheckCallList(model, model.inputs, "inputs", where));
  GG_RETURN_IF_ERROR(CheckCallList(model, model.outputs, "outputs", where));
  for (size_t c = 0; c < model.calls.size(); ++c) {
    const LayerCall& call = model.calls[c];
    const std::string at = absl::StrCat(where, ": call ", c);
    if (call.layer == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(at, " has no layer"));
    }
    const bool listed = Contains(model.inputs, static_cast<int>(c));
    if (IsInput(*call.layer) != listed) {
      return absl::InvalidArgumentError(absl::StrCat(
          at, listed ? " is one of the model's inputs but not an Input layer"
                     : " is an Input layer but not one of the model's inputs"));
    }
    if (!TakesInputCount(*call.layer, call.inputs.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          at, " reads ", call.inputs.size(), " values; its layer takes ",
          InputCountText(*call.layer)));
    }
    for (int in : call.inputs) {
      if (in < 0 || in >= static_cast<int>(c)) {
        return absl::InvalidArgumentError(absl::StrCat(
            at, " reads call ", in, ", which is not an earlier call"));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<TensorShape> CallInputShapes(const ModelGraph& model,
                                         const std::vector<TensorShape>& values,
                                         int call) {
  const LayerCall& c = model.calls[call];
  if (c.inputs.empty()) return {c.layer->input_shape};
  std::vector<TensorShape> in;
  in.reserve(c.inputs.size());
  for (int i : c.inputs) in.push_back(values[i]);
  return in;
}

absl::StatusOr<std::vector<TensorShape>> CheckCalls(const ModelGraph& model,
                                                    Graph& graph,
                                                    const std::string& where) {
  std::vector<TensorShape> values;
  values.reserve(model.calls.size());
  for (size_t c = 0; c < model.calls.size(); ++c) {
    const int call = static_cast<int>(c);
    const std::vector<TensorShape> in = CallInputShapes(model, values, call);
    LayerState& layer = *model.calls[c].layer;
    absl::StatusOr<TensorShape> out = CheckLayerCall(layer, graph, in);
    if (!out.ok()) {
      return Annotate(out.status(), absl::StrCat(where, ": layer ", c));
    }
    // An Input's value is the shape it was given.
    values.push_back(IsInput(layer) ? in[0] : *std::move(out));
  }
  return values;
}

}  // namespace models_internal
}  // namespace graphgc
