// serialize/graph_import.cc: ImportGraphDef, a GraphDef staged whole and
// added to a graph at once (see graph_def.h).
#include <algorithm>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/registry.h"
#include "ops/resources.h"
#include "runtime/algorithm.h"
#include "serialize/attr_codec.h"
#include "serialize/graph_def.h"
#include "serialize/node_def.pb.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

constexpr absl::string_view kOutputShapes = "_output_shapes";

// One GraphDef node, validated and ready to stage.
struct PendingNode {
  const proto::NodeDef* def = nullptr;
  const RegisteredOp* op = nullptr;
  std::string name;                         // with the prefix
  std::vector<std::pair<int, int>> inputs;  // (node position, output)
  std::vector<int> control_inputs;          // node positions
  AttrMap attrs;
};

class Importer {
 public:
  Importer(const proto::GraphDef& def, Graph& graph,
           const ImportOptions& options)
      : def_(def), graph_(graph), options_(options) {}

  absl::StatusOr<std::vector<NodeHandle>> Run() {
    GG_RETURN_IF_ERROR(IndexNames());
    GG_RETURN_IF_ERROR(CheckTensorBudget());
    nodes_.resize(def_.node_size());
    for (int i = 0; i < def_.node_size(); ++i) {
      GG_RETURN_IF_ERROR(Prepare(i));
    }
    GG_ASSIGN_OR_RETURN(std::vector<int> order, BuildOrder());
    GG_RETURN_IF_ERROR(CheckReservedScopes());
    if (!CheckNamesFree().ok()) {
      // The names may be held only by garbage: collect once, then decide.
      graph_.Collect();
      GG_RETURN_IF_ERROR(CheckNamesFree());
    }
    GG_ASSIGN_OR_RETURN(std::vector<BatchNodeSpec> batch, Stage(order));
    return Commit(order, std::move(batch));
  }

 private:
  absl::Status Error(const proto::NodeDef& node, absl::StatusCode code,
                     absl::string_view what) const {
    return absl::Status(
        code, absl::StrCat("ImportGraphDef: node '", node.name(), "' (",
                           node.op(), "): ", what));
  }
  absl::Status Error(const proto::NodeDef& node, absl::string_view what) const {
    return Error(node, absl::StatusCode::kInvalidArgument, what);
  }

  // Bytes the tensor attribute values of all nodes declare (element count
  // times dtype size, whatever the TensorProto holds) against
  // options_.max_tensor_bytes, before any is built. A value whose dtype or
  // shape TensorFromProto refuses counts nothing here: Prepare reports it.
  absl::Status CheckTensorBudget() const {
    int64_t total = 0;
    for (const proto::NodeDef& node : def_.node()) {
      std::vector<std::string> keys;  // in order, so errors are stable
      for (const auto& [key, value] : node.attr()) {
        if (value.value_case() == proto::AttrValue::kTensor &&
            key != kOutputShapes) {
          keys.push_back(key);
        }
      }
      std::sort(keys.begin(), keys.end());
      for (const std::string& key : keys) {
        const proto::TensorProto& t = node.attr().at(key).tensor();
        absl::StatusOr<DataType> dtype = DataTypeFromProto(t.dtype());
        if (!dtype.ok() || !IsTensorDataType(*dtype)) continue;
        absl::StatusOr<TensorShape> shape =
            ShapeFromProto(t.tensor_shape(), false);
        if (!shape.ok()) continue;
        absl::StatusOr<int64_t> n = shape->CheckedNumElements();
        if (!n.ok()) continue;
        const int64_t left = options_.max_tensor_bytes - total;
        int64_t bytes = 0;
        if (!MultiplySizes(*n, DataTypeSize(*dtype), &bytes, left)) {
          return Error(
              node, absl::StatusCode::kResourceExhausted,
              absl::StrCat("attribute '", key, "': a tensor of shape ",
                           shape->DebugString(), " and dtype ",
                           DataTypeString(*dtype), " takes more than the ",
                           std::max<int64_t>(left, 0),
                           " bytes left of the import's budget of ",
                           options_.max_tensor_bytes,
                           " bytes for tensors "
                           "(ImportOptions::max_tensor_bytes)"));
        }
        total += bytes;
      }
    }
    return absl::OkStatus();
  }

  // A live owner's reserved scope is its own: no imported node goes into
  // it (see the header).
  absl::Status CheckReservedScopes() const {
    for (const PendingNode& n : nodes_) {
      std::optional<Graph::ReservedScope> r = graph_.FindReservedScope(n.name);
      if (!r.has_value()) continue;
      return Error(
          *n.def, absl::StatusCode::kAlreadyExists,
          absl::StrCat("scope '", r->scope, "' is reserved by ",
                       r->owner.empty() ? "a live layer or model" : r->owner,
                       "; import with ImportOptions::prefix to place the "
                       "nodes elsewhere"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckNamesFree() const {
    for (const PendingNode& n : nodes_) {
      if (graph_.FindNode(n.name).has_value()) {
        return Error(
            *n.def, absl::StatusCode::kAlreadyExists,
            absl::StrCat("the graph already has a node named '", n.name, "'"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status IndexNames() {
    for (int i = 0; i < def_.node_size(); ++i) {
      const proto::NodeDef& node = def_.node(i);
      if (!IsValidNodeName(node.name())) {
        return Error(node, absl::StrCat("invalid node name: ", kNodeNameRule));
      }
      auto [it, inserted] = positions_.emplace(node.name(), i);
      if (!inserted) {
        return Error(node, absl::StrCat("duplicate name (also node #",
                                        it->second, " of the GraphDef)"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Prepare(int i) {
    const proto::NodeDef& node = def_.node(i);
    PendingNode& p = nodes_[i];
    p.def = &node;
    p.name = options_.prefix.empty()
                 ? node.name()
                 : absl::StrCat(options_.prefix, "/", node.name());
    if (!IsValidNodeName(p.name)) {
      return Error(node,
                   absl::StrCat("invalid name with prefix: '", p.name, "'"));
    }
    absl::StatusOr<const RegisteredOp*> op =
        GlobalOpRegistry().Lookup(node.op());
    if (!op.ok()) {
      return Error(node,
                   absl::StrCat("op type '", node.op(), "' is not registered"));
    }
    p.op = *op;

    // Inputs: "name", "name:k" data inputs, then "^name" control inputs.
    for (int k = 0; k < node.input_size(); ++k) {
      const std::string& in = node.input(k);
      if (absl::StartsWith(in, "^")) {
        const std::string name = in.substr(1);
        auto it = positions_.find(name);
        if (it == positions_.end()) {
          return Error(node,
                       absl::StrCat("control input '", in, "' is not defined"));
        }
        p.control_inputs.push_back(it->second);
        continue;
      }
      if (!p.control_inputs.empty()) {
        return Error(node, absl::StrCat("input ", k, " '", in,
                                        "' is a data input after a control "
                                        "input"));
      }
      const int data_index = static_cast<int>(p.inputs.size());
      std::string name = in;
      int output = 0;
      if (size_t colon = in.rfind(':'); colon != std::string::npos) {
        name = in.substr(0, colon);
        absl::string_view digits = absl::string_view(in).substr(colon + 1);
        const bool all_digits =
            !digits.empty() &&
            std::all_of(digits.begin(), digits.end(),
                        [](char c) { return c >= '0' && c <= '9'; });
        if (!all_digits || !absl::SimpleAtoi(digits, &output)) {
          return Error(node, absl::StrCat("input ", data_index, " '", in,
                                          "' is not \"name\" or "
                                          "\"name:output\""));
        }
      }
      auto it = positions_.find(name);
      if (it == positions_.end()) {
        return Error(node, absl::StrCat("input ", data_index, " '", in,
                                        "' is not defined"));
      }
      const proto::NodeDef& producer = def_.node(it->second);
      absl::StatusOr<const RegisteredOp*> producer_op =
          GlobalOpRegistry().Lookup(producer.op());
      if (producer_op.ok() && output >= (*producer_op)->num_outputs) {
        return Error(
            node,
            absl::StrCat("input ", data_index, " '", in, "' reads output ",
                         output, " of '", name, "' (", producer.op(),
                         "), which has ", (*producer_op)->num_outputs));
      }
      p.inputs.emplace_back(it->second, output);
    }
    const int n = static_cast<int>(p.inputs.size());
    if (p.op->variadic ? n < p.op->min_inputs
                       : n != static_cast<int>(p.op->input_names.size())) {
      return Error(node,
                   absl::StrCat("takes ", p.op->variadic ? "at least " : "",
                                p.op->variadic ? int64_t{p.op->min_inputs}
                                               : static_cast<int64_t>(
                                                     p.op->input_names.size()),
                                " data inputs, got ", n));
    }

    // Attributes: TensorFlow's names, each of the type the op declares.
    std::vector<std::string> keys;
    for (const auto& [key, value] : node.attr()) keys.push_back(key);
    std::sort(keys.begin(), keys.end());  // errors in a stable order
    for (const std::string& key : keys) {
      const proto::AttrValue& value = node.attr().at(key);
      if (key == kOutputShapes) continue;  // recomputed by the shape function
      if (absl::StartsWith(key, "_")) {
        // Private attributes graphgc can hold are kept, others dropped.
        std::string kind = ProtoAttrKind(value);
        if (kind == "list") kind = "list(int)";
        absl::StatusOr<AttrValue> v = AttrFromProto(value, kind);
        if (v.ok()) p.attrs[key] = *std::move(v);
        continue;
      }
      auto spec =
          std::find_if(p.op->attrs.begin(), p.op->attrs.end(),
                       [&](const AttrSpec& s) { return s.name == key; });
      if (spec == p.op->attrs.end()) {
        std::vector<std::string> known;
        for (const AttrSpec& s : p.op->attrs) known.push_back(s.name);
        return Error(
            node, absl::StrCat("unknown attribute '", key,
                               "' (takes: ", absl::StrJoin(known, ", "), ")"));
      }
      absl::StatusOr<AttrValue> v = AttrFromProto(value, spec->type);
      if (!v.ok()) {
        return Error(node, absl::StrCat("attribute '", key,
                                        "': ", v.status().message()));
      }
      p.attrs[key] = *std::move(v);
    }
    for (const AttrSpec& spec : p.op->attrs) {
      if (p.attrs.contains(spec.name)) continue;
      const bool inferred =
          (spec.name == "T" && spec.type == "type" && n > 0) ||
          (spec.name == "N" && p.op->variadic);
      if (!inferred && !spec.default_value.has_value()) {
        return Error(node, absl::StrCat("attribute '", spec.name, "' (",
                                        spec.type, ") is missing"));
      }
    }
    return absl::OkStatus();
  }

  // Positions in an order where every node follows its inputs: depth-first,
  // from the nodes in GraphDef order. InvalidArgument on a cycle.
  absl::StatusOr<std::vector<int>> BuildOrder() const {
    // Successors are inputs, data then control; a back edge is a cycle,
    // named from where it closes.
    struct Walk {
      const Importer& im;
      std::vector<DfsMark> marks;
      std::vector<int> order;
      size_t NumSuccessors(int node) const {
        const PendingNode& p = im.nodes_[node];
        return p.inputs.size() + p.control_inputs.size();
      }
      std::optional<int> Successor(int node, size_t k) const {
        const PendingNode& p = im.nodes_[node];
        return k < p.inputs.size() ? p.inputs[k].first
                                   : p.control_inputs[k - p.inputs.size()];
      }
      DfsMark Discover(int& node) {
        const DfsMark before = marks[node];
        if (before == DfsMark::kNew) marks[node] = DfsMark::kOpen;
        return before;
      }
      absl::Status BackEdge(int, int d, absl::Span<const DfsFrame<int>> stack) {
        std::vector<std::string> cycle;
        size_t f = stack.size();
        while (f > 0 && stack[f - 1].node != d) --f;
        for (size_t j = f - 1; j < stack.size(); ++j) {
          cycle.push_back(im.def_.node(stack[j].node).name());
        }
        cycle.push_back(im.def_.node(d).name());
        return im.Error(im.def_.node(d),
                        absl::StrCat("is part of a cycle (",
                                     absl::StrJoin(cycle, " <- "), ")"));
      }
      absl::Status Finish(int node) {
        marks[node] = DfsMark::kDone;
        order.push_back(node);
        return absl::OkStatus();
      }
    };
    Walk walk{*this, std::vector<DfsMark>(nodes_.size(), DfsMark::kNew), {}};
    walk.order.reserve(nodes_.size());
    PostOrderDfs<int, Walk> dfs(walk);
    for (int start = 0; start < static_cast<int>(nodes_.size()); ++start) {
      GG_RETURN_IF_ERROR(dfs.Visit(start));
    }
    return std::move(walk.order);
  }

  // Runs every node's checks and shape function in `order` (inputs first),
  // each on what its staged inputs will be, and returns the batch that adds
  // them all: node `order[k]` at batch position k. Builds nothing.
  absl::StatusOr<std::vector<BatchNodeSpec>> Stage(
      const std::vector<int>& order) const {
    std::vector<size_t> position(nodes_.size());
    for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
    std::vector<StagedNode> staged(nodes_.size());
    std::vector<BatchNodeSpec> batch;
    batch.reserve(order.size());
    for (int i : order) {
      const PendingNode& p = nodes_[i];
      std::vector<InputInfo> infos;
      infos.reserve(p.inputs.size());
      for (const auto& [producer, output] : p.inputs) {
        infos.push_back(DescribeStaged(staged, producer, output));
      }
      absl::StatusOr<StagedNode> node =
          StageNode(GlobalOpRegistry(), p.def->op(), p.name, infos, p.attrs);
      if (!node.ok()) return Error(*p.def, node.status().message());
      if (auto* named = dynamic_cast<NamedResource*>(node->resource.get())) {
        named->set_node_name(p.name);  // names are never uniqued
      }
      BatchNodeSpec spec{.op = p.def->op(),
                         .op_def = &p.op->def,
                         .name = p.name,
                         .attrs = node->attrs,
                         .resource = node->resource};
      for (const auto& [producer, output] : p.inputs) {
        spec.inputs.emplace_back(
            BatchOutput{.position = position[producer], .index = output});
      }
      for (int c : p.control_inputs) {
        spec.control_inputs.emplace_back(BatchNode{.position = position[c]});
      }
      for (const OutputInfo& o : node->outputs) {
        spec.output_types.push_back(o.dtype);
        spec.output_shapes.push_back(o.shape);
      }
      batch.push_back(std::move(spec));
      staged[i] = *std::move(node);
    }
    return batch;
  }

  // What a shape function knows of output `output` of the staged node at
  // GraphDef position `producer`.
  InputInfo DescribeStaged(const std::vector<StagedNode>& staged, int producer,
                           int output) const {
    const PendingNode& p = nodes_[producer];
    std::optional<TensorShape> shape_input;
    if (p.def->op() == "Shape" && !p.inputs.empty()) {
      const auto& [x, x_output] = p.inputs[0];
      shape_input = staged[x].outputs[x_output].shape;
    }
    return DescribeOutput(p.def->op(), staged[producer].attrs,
                          staged[producer].outputs[output], shape_input);
  }

  // Adds the staged batch at once; handles come back in GraphDef order.
  absl::StatusOr<std::vector<NodeHandle>> Commit(
      const std::vector<int>& order, std::vector<BatchNodeSpec> batch) {
    absl::StatusOr<std::vector<NodeHandle>> added =
        graph_.AddNodes(std::move(batch));
    if (!added.ok()) {
      // Only what changed since the checks above: a name another thread
      // took, or a graph that filled up.
      return absl::Status(
          added.status().code(),
          absl::StrCat("ImportGraphDef: ", added.status().message()));
    }
    std::vector<NodeHandle> handles(nodes_.size());
    for (size_t k = 0; k < order.size(); ++k) {
      handles[order[k]] = std::move((*added)[k]);
    }
    return handles;
  }

  const proto::GraphDef& def_;
  Graph& graph_;
  const ImportOptions& options_;
  absl::flat_hash_map<std::string, int> positions_;
  std::vector<PendingNode> nodes_;
};

}  // namespace

absl::StatusOr<std::vector<NodeHandle>> ImportGraphDef(
    const proto::GraphDef& graph_def, Graph& graph, ImportOptions options) {
  try {
    graph.collector().MaybeCollect();  // an import builds: a safe point
    return Importer(graph_def, graph, options).Run();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("ImportGraphDef: out of memory importing ",
                     graph_def.node_size(), " nodes"));
  }
}

}  // namespace graphgc
