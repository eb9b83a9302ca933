#include "models/functional_config.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/compile_config.h"
#include "models/layer_registry.h"
#include "models/layer_state.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

constexpr char kTensorClass[] = "__keras_tensor__";

// A value a node reads: the one output of call `node` of layer `layer`,
// as a node id (GraphReader::Id).
using NodeId = int;

// One call of a layer, as its "inbound_nodes" entry describes it.
struct NodeSpec {
  bool list = false;  // args[0] is a list (a merge layer's call)
  std::vector<NodeId> args;
};

// Reads a Functional's graph: every layer's nodes first (so that a
// reference is checked against the whole model), then the calls in an
// order where each comes after the values it reads (Kahn's algorithm: a
// node waits for those it reads and for its layer's previous node, as
// Keras processes a layer's nodes in order), then the model's ends.
class GraphReader {
 public:
  GraphReader(const Json& entries, std::vector<Layer> layers,
              const std::string& file)
      : entries_(entries), layers_(std::move(layers)), file_(file) {}

  absl::StatusOr<FunctionalGraph> Read(const ConfigObject& config) {
    GG_RETURN_IF_ERROR(ReadNames());
    GG_RETURN_IF_ERROR(ReadNodes());
    GG_RETURN_IF_ERROR(Resolve());
    FunctionalGraph out;
    GG_ASSIGN_OR_RETURN(out.inputs, ReadEnds(config, "input_layers"));
    GG_ASSIGN_OR_RETURN(out.outputs, ReadEnds(config, "output_layers"));
    out.layers = std::move(layers_);
    out.weights_input_shapes = std::move(weights_in_);
    return out;
  }

 private:
  std::string Where(size_t layer) const {
    return absl::StrCat(file_, ": layers[", layer, "] ('", names_[layer], "')");
  }
  NodeId Id(int layer, int node) const { return first_node_[layer] + node; }

  absl::Status ReadNames() {
    for (size_t i = 0; i < layers_.size(); ++i) {
      const ConfigObject entry(entries_[i],
                               absl::StrCat(file_, ": layers[", i, "]"));
      GG_ASSIGN_OR_RETURN(std::string name, entry.String("name"));
      auto [it, added] = by_name_.emplace(name, static_cast<int>(i));
      if (!added) {
        return entry.Error(absl::StrCat("field 'name': '", name,
                                        "' is the name of layers[", it->second,
                                        "] too; a Functional's layer names "
                                        "are unique"));
      }
      names_.push_back(std::move(name));
    }
    return absl::OkStatus();
  }

  // Counts each layer's nodes, then reads them (a reference may name a
  // later layer).
  absl::Status ReadNodes() {
    int total = 0;
    for (size_t i = 0; i < layers_.size(); ++i) {
      const ConfigObject entry(entries_[i], Where(i));
      const Json* inbound = entry.Find("inbound_nodes");
      if (inbound == nullptr) return entry.Missing("inbound_nodes");
      if (!inbound->is_array()) {
        return entry.WrongType("inbound_nodes", "a list of nodes", *inbound);
      }
      const bool is_input = IsInputLayer(*SavingAccess::State(layers_[i]));
      if (is_input && !inbound->empty()) {
        return entry.Error(
            "field 'inbound_nodes' must be empty for an InputLayer (its "
            "node is the model's input)");
      }
      if (!is_input && inbound->empty()) {
        return entry.Error(
            "field 'inbound_nodes' is empty: the layer is never called in "
            "the model");
      }
      first_node_.push_back(total);
      node_count_.push_back(is_input ? 1 : static_cast<int>(inbound->size()));
      total += node_count_.back();
    }
    nodes_.resize(total);
    node_layer_.resize(total);
    for (size_t i = 0; i < layers_.size(); ++i) {
      const Json& inbound = entries_[i]["inbound_nodes"];
      for (int k = 0; k < node_count_[i]; ++k) {
        node_layer_[Id(i, k)] = static_cast<int>(i);
        if (inbound.empty()) continue;  // an InputLayer's implicit node
        GG_ASSIGN_OR_RETURN(
            nodes_[Id(i, k)],
            ReadNode(inbound[k],
                     absl::StrCat(Where(i), " inbound_nodes[", k, "]")));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<NodeSpec> ReadNode(const Json& node,
                                    const std::string& where) const {
    if (!node.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where,
          " must be an object {\"args\": [...], \"kwargs\": {...}} (Keras "
          "3's format), got ",
          Shown(node)));
    }
    const ConfigObject n(node, where);
    const Json* args = n.Find("args");
    if (args == nullptr) return n.Missing("args");
    if (!args->is_array()) return n.WrongType("args", "a list", *args);
    if (args->size() != 1) {
      return n.Error(absl::StrCat(
          "field 'args' must hold one value (the layer's input, or its list "
          "of inputs), got ",
          args->size()));
    }
    NodeSpec spec;
    const Json& arg = (*args)[0];
    if (arg.is_array()) {
      spec.list = true;
      if (arg.empty()) return n.Error("field 'args': args[0] is an empty list");
      for (size_t j = 0; j < arg.size(); ++j) {
        GG_ASSIGN_OR_RETURN(
            NodeId id,
            ReadTensor(arg[j], absl::StrCat(where, " args[0][", j, "]")));
        spec.args.push_back(id);
      }
    } else {
      GG_ASSIGN_OR_RETURN(NodeId id,
                          ReadTensor(arg, absl::StrCat(where, " args[0]")));
      spec.args.push_back(id);
    }
    const Json* kwargs = n.Find("kwargs");
    if (kwargs != nullptr && !kwargs->is_null()) {
      if (!kwargs->is_object()) {
        return n.WrongType("kwargs", "an object", *kwargs);
      }
      // Keras records call arguments such as "mask": null or "training":
      // false; a value (a tensor) is not something graphgc's layers take.
      for (auto it = kwargs->begin(); it != kwargs->end(); ++it) {
        if (!it->is_null() && !it->is_boolean()) {
          return n.Error(absl::StrCat(
              "field 'kwargs' holds '", it.key(), "' (", Shown(*it),
              "); graphgc's layers take only null or boolean call "
              "arguments"));
        }
      }
    }
    return spec;
  }

  absl::StatusOr<NodeId> ReadTensor(const Json& t,
                                    const std::string& where) const {
    if (!t.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " must be a Keras tensor object {\"class_name\": \"",
          kTensorClass, "\", \"config\": {...}}, got ", Shown(t)));
    }
    const ConfigObject tensor(t, where);
    GG_ASSIGN_OR_RETURN(const std::string class_name,
                        tensor.String("class_name"));
    if (class_name != kTensorClass) {
      return tensor.Error(absl::StrCat("class_name is '", class_name,
                                       "', not '", kTensorClass, "'"));
    }
    GG_ASSIGN_OR_RETURN(const ConfigObject config,
                        tensor.Child("config", where + " config"));
    if (const Json* shape = config.Find("shape");
        shape != nullptr && !shape->is_null()) {
      bool ok = shape->is_array();
      if (ok) {
        for (const Json& d : *shape) {
          ok = ok && (d.is_null() || d.is_number_integer());
        }
      }
      if (!ok) {
        return config.WrongType("shape", "a list of integers or nulls", *shape);
      }
    }
    GG_RETURN_IF_ERROR(config.String("dtype", "float32").status());
    const Json* history = config.Find("keras_history");
    if (history == nullptr) return config.Missing("keras_history");
    return ReadHistory(*history, config.where() + " keras_history");
  }

  // [layer_name, node_index, tensor_index], as "keras_history" and the
  // model's "input_layers" / "output_layers" entries hold it.
  absl::StatusOr<NodeId> ReadHistory(const Json& h,
                                     const std::string& where) const {
    auto bad = [&](const std::string& what) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
    };
    if (!h.is_array() || h.size() != 3 || !h[0].is_string() ||
        !h[1].is_number_integer() || !h[2].is_number_integer()) {
      return bad(absl::StrCat(
          "must be [layer_name, node_index, tensor_index] (a string and two "
          "integers), got ",
          Shown(h)));
    }
    const std::string name = h[0].get<std::string>();
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      return bad(absl::StrCat("names layer '", name,
                              "', which is not in the config's layers"));
    }
    const int layer = it->second;
    // Read as unsigned when it is: a value over 2^63 is not negative.
    const bool negative = !h[1].is_number_unsigned() && h[1].get<int64_t>() < 0;
    if (negative ||
        h[1].get<uint64_t>() >= static_cast<uint64_t>(node_count_[layer])) {
      return bad(absl::StrCat("node_index ", h[1].dump(),
                              " is out of range: layer '", name, "' has ",
                              node_count_[layer], " node(s) in the model"));
    }
    if (!(h[2].is_number_unsigned() && h[2].get<uint64_t>() == 0)) {
      return bad(absl::StrCat("tensor_index ", h[2].dump(),
                              " is out of range: layer '", name,
                              "' has one output (tensor_index 0)"));
    }
    return Id(layer, static_cast<int>(h[1].get<uint64_t>()));
  }

  // Makes every call's value, each after those it reads.
  absl::Status Resolve() {
    const size_t n = nodes_.size();
    std::vector<std::vector<NodeId>> readers(n);
    std::vector<int> waits(n, 0);
    for (size_t v = 0; v < n; ++v) {
      const int layer = node_layer_[v];
      if (static_cast<int>(v) > first_node_[layer]) {
        readers[v - 1].push_back(static_cast<NodeId>(v));
        ++waits[v];
      }
      for (NodeId u : nodes_[v].args) {
        readers[u].push_back(static_cast<NodeId>(v));
        ++waits[v];
      }
    }
    std::deque<NodeId> ready;
    for (size_t v = 0; v < n; ++v) {
      if (waits[v] == 0) ready.push_back(static_cast<NodeId>(v));
    }
    values_.resize(n);
    weights_in_.resize(layers_.size());
    std::vector<bool> seen_layer(layers_.size(), false);
    size_t done = 0;
    while (!ready.empty()) {
      const NodeId v = ready.front();
      ready.pop_front();
      GG_RETURN_IF_ERROR(Call(v, seen_layer));
      ++done;
      for (NodeId r : readers[v]) {
        if (--waits[r] == 0) ready.push_back(r);
      }
    }
    if (done == n) return absl::OkStatus();
    for (size_t v = 0; v < n; ++v) {
      if (waits[v] == 0) continue;
      const int layer = node_layer_[v];
      return absl::InvalidArgumentError(absl::StrCat(
          Where(layer), " inbound_nodes[", v - first_node_[layer],
          "]: its inputs form a cycle or depend on one (a layer call "
          "that reads its own output, directly or through other calls)"));
    }
    return absl::InternalError("Functional config: unresolved nodes");
  }

  // Node `v`'s value: its layer called on the values it reads (all made).
  absl::Status Call(NodeId v, std::vector<bool>& seen_layer) {
    const int i = node_layer_[v];
    const NodeSpec& spec = nodes_[v];
    KerasTensor value;
    TensorShape in;
    if (spec.args.empty()) {
      // An InputLayer's node: the Input() value of its shape and name,
      // whose layer stands for the config's.
      const LayerState* state = SavingAccess::State(layers_[i]);
      value = Input(state->input_shape, layers_[i].name());
      layers_[i] = value.layer();
      in = value.shape();
    } else if (spec.list) {
      std::vector<KerasTensor> xs;
      for (NodeId u : spec.args) xs.push_back(values_[u]);
      in = xs[0].shape();
      value = layers_[i](xs);
    } else {
      in = values_[spec.args[0]].shape();
      value = layers_[i](values_[spec.args[0]]);
    }
    absl::Status s = value.status();
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat(Where(i), " inbound_nodes[",
                                       v - first_node_[i], "]: ", s.message()));
    }
    if (!seen_layer[i]) {
      seen_layer[i] = true;
      weights_in_[i] = in;
    }
    values_[v] = std::move(value);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<KerasTensor>> ReadEnds(const ConfigObject& config,
                                                    const char* key) const {
    const Json* ends = config.Find(key);
    if (ends == nullptr) return config.Missing(key);
    const char* want =
        "[layer_name, node_index, tensor_index] or a list of them";
    if (!ends->is_array() || ends->empty()) {
      return config.WrongType(key, want, *ends);
    }
    const bool one = (*ends)[0].is_string();
    std::vector<const Json*> refs;
    if (one) {
      refs.push_back(ends);
    } else {
      for (const Json& e : *ends) refs.push_back(&e);
    }
    std::vector<KerasTensor> out;
    for (size_t j = 0; j < refs.size(); ++j) {
      const std::string where =
          one ? absl::StrCat(config.where(), " ", key)
              : absl::StrCat(config.where(), " ", key, "[", j, "]");
      GG_ASSIGN_OR_RETURN(NodeId id, ReadHistory(*refs[j], where));
      const int layer = node_layer_[id];
      if (std::string(key) == "input_layers" &&
          !IsInputLayer(*SavingAccess::State(layers_[layer]))) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": names layer '", names_[layer],
                         "', which is not an InputLayer"));
      }
      out.push_back(values_[id]);
    }
    return out;
  }

  const Json& entries_;
  std::vector<Layer> layers_;
  const std::string& file_;
  std::vector<std::string> names_;
  std::map<std::string, int> by_name_;
  std::vector<int> first_node_;  // per layer
  std::vector<int> node_count_;  // per layer
  std::vector<NodeSpec> nodes_;  // per node id
  std::vector<int> node_layer_;  // per node id
  std::vector<KerasTensor> values_;
  std::vector<TensorShape> weights_in_;
};

}  // namespace

std::vector<size_t> KerasLayerOrder(const ModelSnapshot& snap) {
  const ModelGraph& g = snap.graph;
  std::map<const LayerState*, size_t> index;
  for (size_t i = 0; i < snap.layers.size(); ++i) {
    index[snap.layers[i].state] = i;
  }
  const size_t n = g.calls.size();
  auto layer_of = [&](size_t call) -> size_t {
    auto it = index.find(g.calls[call].layer.get());
    return it == index.end() ? 0 : it->second;
  };
  // Keras's _build_map: a depth-first walk from each output, numbering
  // layers when first reached (before their inputs) and listing calls
  // after their inputs (without recursion).
  constexpr int64_t kUnreached = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> first_seen(snap.layers.size(), kUnreached);
  int64_t seen = 0;
  std::vector<bool> finished(n, false);
  std::vector<size_t> post_order;
  for (int out : g.outputs) {
    std::vector<std::pair<size_t, size_t>> stack = {{out, 0}};
    while (!stack.empty()) {
      auto& [c, next] = stack.back();
      if (next == 0) {
        if (finished[c]) {
          stack.pop_back();
          continue;
        }
        if (first_seen[layer_of(c)] == kUnreached) {
          first_seen[layer_of(c)] = seen++;
        }
      }
      if (next < g.calls[c].inputs.size()) {
        const size_t in = g.calls[c].inputs[next++];
        if (!finished[in]) stack.emplace_back(in, 0);
        continue;
      }
      finished[c] = true;
      post_order.push_back(c);
      stack.pop_back();
    }
  }
  // Keras's map_graph: depths from the outputs back, each layer as deep as
  // its deepest call so far.
  std::vector<int64_t> call_depth(n, 0);
  std::vector<int64_t> layer_depth(snap.layers.size(), -1);
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
    const size_t c = *it;
    const size_t l = layer_of(c);
    const int64_t depth =
        std::max(call_depth[c], std::max<int64_t>(layer_depth[l], 0));
    layer_depth[l] = depth;
    call_depth[c] = depth;
    for (int in : g.calls[c].inputs) {
      call_depth[in] = std::max(call_depth[in], depth + 1);
    }
  }
  // Inputs the outputs do not reach: depth 0, first.
  for (int in : g.inputs) {
    const size_t l = layer_of(in);
    if (layer_depth[l] < 0) {
      layer_depth[l] = 0;
      first_seen[l] = -1;
    }
  }
  std::vector<size_t> order(snap.layers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Deepest first; ties in the order the walk first reached them.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (layer_depth[a] != layer_depth[b])
      return layer_depth[a] > layer_depth[b];
    return first_seen[a] < first_seen[b];
  });
  return order;
}

absl::StatusOr<FunctionalGraph> ReadFunctionalGraph(const ConfigObject& config,
                                                    const Json& entries,
                                                    std::vector<Layer> layers,
                                                    const std::string& file) {
  return GraphReader(entries, std::move(layers), file).Read(config);
}

Json FunctionalConfigJson(const ModelSnapshot& snap,
                          const ScopeRenaming& renaming) {
  const ModelGraph& g = snap.graph;
  std::map<const LayerState*, size_t> index;
  std::vector<std::string> names;
  for (size_t i = 0; i < snap.layers.size(); ++i) {
    index[snap.layers[i].state] = i;
    names.push_back(RenameScopes(snap.layers[i].layer.name(), renaming));
  }
  // Each call's layer and its node index: the calls of a layer numbered in
  // call order, which puts every value before its readers.
  std::vector<size_t> layer_of(g.calls.size(), 0);
  std::vector<int> node_of(g.calls.size(), 0);
  std::vector<int> calls_of(snap.layers.size(), 0);
  std::vector<Json> inbound(snap.layers.size(), Json::array());
  auto tensor = [&](int call) {
    Json history = Json::array({names[layer_of[call]], node_of[call], 0});
    return Json{{"class_name", kTensorClass},
                {"config",
                 {{"shape", BatchShape(snap.call_shapes[call])},
                  {"dtype", "float32"},
                  {"keras_history", std::move(history)}}}};
  };
  for (size_t c = 0; c < g.calls.size(); ++c) {
    auto it = index.find(g.calls[c].layer.get());
    if (it == index.end()) continue;  // every called layer is listed
    layer_of[c] = it->second;
    node_of[c] = calls_of[it->second]++;
    if (g.calls[c].inputs.empty()) continue;  // an Input's implicit node
    Json args = Json::array();
    if (TakesList(*g.calls[c].layer)) {
      Json list = Json::array();
      for (int in : g.calls[c].inputs) list.push_back(tensor(in));
      args.push_back(std::move(list));
    } else {
      args.push_back(tensor(g.calls[c].inputs[0]));
    }
    Json node = Json::object();
    node["args"] = std::move(args);
    node["kwargs"] = Json::object();
    inbound[it->second].push_back(std::move(node));
  }
  Json layers = Json::array();
  for (size_t i : KerasLayerOrder(snap)) {
    const SavedLayer& saved = snap.layers[i];
    // Every kind a model can hold is in the table; Save checks first.
    const LayerKind* kind = FindLayerKind(saved.layer.kind());
    Json entry = KerasObject("keras.layers", kind->class_name.c_str(),
                             kind->write_config(*saved.state, names[i]));
    entry["name"] = names[i];
    entry["inbound_nodes"] = std::move(inbound[i]);
    layers.push_back(std::move(entry));
  }
  // One input (output): its triple, as Keras writes Model(x, y); several:
  // the list of them.
  auto ends = [&](const std::vector<int>& calls) {
    Json out = Json::array();
    for (int c : calls) {
      out.push_back(Json::array({names[layer_of[c]], node_of[c], 0}));
    }
    return out.size() == 1 ? Json(out[0]) : out;
  };
  Json config = Json::object();
  config["name"] = RenameScopes(snap.name, renaming);
  config["trainable"] = true;
  config["layers"] = std::move(layers);
  config["input_layers"] = ends(g.inputs);
  config["output_layers"] = ends(g.outputs);
  Json root = KerasObject("keras.src.models.functional", "Functional", config);
  root["registered_name"] = "Functional";
  root["build_config"] = {{"input_shape", nullptr}};
  root["compile_config"] =
      snap.compiled ? CompileJson(snap.compile) : Json(nullptr);
  return root;
}

}  // namespace models_internal
}  // namespace graphgc
