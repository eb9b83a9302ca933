// serialize/graph_export.cc: ExportGraphDef, a graph's reachable part as
// TensorFlow's GraphDef (see graph_def.h), and DeterministicBytes.
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "runtime/node_view.h"
#include "serialize/attr_codec.h"
#include "serialize/graph_def.h"
#include "serialize/node_def.pb.h"
#include "serialize/versions.pb.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

constexpr absl::string_view kOutputShapes = "_output_shapes";

std::string InputString(const Output& in) {
  return in.index() == 0 ? in.node_name()
                         : absl::StrCat(in.node_name(), ":", in.index());
}

// Attributes TensorFlow added to an op after kGraphDefProducer: a reader of
// that producer does not declare them (MatMul gained grad_a and grad_b in
// TensorFlow 2.13), so they are left out while they hold their default,
// false, which is what such a reader assumes.
bool IsNewerDefaultAttr(const std::string& op, const std::string& key,
                        const AttrValue& value) {
  if (op != "MatMul" || (key != "grad_a" && key != "grad_b")) return false;
  const bool* b = std::get_if<bool>(&value);
  return b != nullptr && !*b;
}

// One attempt at exporting; Aborted when the graph changed between reading
// its reachable set and its nodes (a control edge added concurrently).
absl::StatusOr<proto::GraphDef> ExportOnce(Graph& graph,
                                           absl::Span<const NodeHandle> roots,
                                           const ExportOptions& options) {
  absl::StatusOr<std::vector<NodeHandle>> order = graph.ReachableFrom(roots);
  if (!order.ok()) {
    return absl::Status(
        order.status().code(),
        absl::StrCat("ExportGraphDef: ", order.status().message()));
  }
  std::vector<NodeInfo> infos;
  infos.reserve(order->size());
  absl::flat_hash_set<std::string> names;
  for (const NodeHandle& h : *order) {
    GG_ASSIGN_OR_RETURN(NodeInfo info, graph.Describe(h));
    names.insert(info.name);
    infos.push_back(std::move(info));
  }
  proto::GraphDef def;
  def.mutable_versions()->set_producer(kGraphDefProducer);
  for (const NodeInfo& info : infos) {
    proto::NodeDef* node = def.add_node();
    node->set_name(info.name);
    node->set_op(info.op);
    for (const Output& in : info.inputs) {
      if (!names.contains(in.node_name())) {
        return absl::AbortedError("ExportGraphDef: graph changed while read");
      }
      node->add_input(InputString(in));
    }
    for (const NodeHandle& c : info.control_inputs) {
      const NodeView control(c);
      const std::string& name = control.name();
      if (!names.contains(name)) {
        return absl::AbortedError("ExportGraphDef: graph changed while read");
      }
      node->add_input(absl::StrCat("^", name));
    }
    auto& attrs = *node->mutable_attr();
    for (const auto& [key, value] : info.attrs) {
      if (IsNewerDefaultAttr(info.op, key, value)) continue;
      AttrToProto(value, &attrs[key]);
    }
    if (options.output_shapes) {
      proto::AttrValue shapes;
      AttrToProto(info.output_shapes, &shapes);
      shapes.mutable_list();  // an empty list for nodes without outputs
      attrs[std::string(kOutputShapes)] = std::move(shapes);
    }
  }
  return def;
}

}  // namespace

absl::StatusOr<proto::GraphDef> ExportGraphDef(
    absl::Span<const NodeHandle> roots, ExportOptions options) {
  if (roots.empty()) {
    proto::GraphDef def;
    def.mutable_versions()->set_producer(kGraphDefProducer);
    return def;
  }
  for (size_t i = 0; i < roots.size(); ++i) {
    if (!roots[i].valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ExportGraphDef: root ", i, " is an empty handle"));
    }
    if (roots[i].graph() != roots[0].graph()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ExportGraphDef: root ", i, " belongs to another graph than root 0"));
    }
  }
  Graph& graph = *roots[0].graph();
  absl::StatusOr<proto::GraphDef> def;
  for (int attempt = 0; attempt < 3; ++attempt) {
    def = ExportOnce(graph, roots, options);
    if (def.status().code() != absl::StatusCode::kAborted) break;
  }
  if (def.ok() && options.local_scope_names) LocalizeScopeNames(*def);
  return def;
}

absl::StatusOr<proto::GraphDef> ExportGraphDef(const std::vector<Output>& roots,
                                               ExportOptions options) {
  std::vector<NodeHandle> handles;
  handles.reserve(roots.size());
  for (const Output& o : roots) handles.push_back(o.handle());
  return ExportGraphDef(absl::MakeConstSpan(handles), options);
}

std::string DeterministicBytes(const proto::GraphDef& graph_def) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    graph_def.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace graphgc
