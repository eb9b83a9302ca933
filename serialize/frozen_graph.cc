#include "serialize/frozen_graph.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "serialize/graph_def.h"

namespace graphgc {
namespace {

// The node name an input string refers to ("x:1" -> "x", "^x" -> "x").
std::string InputNode(const std::string& input) {
  std::string name = input.substr(!input.empty() && input[0] == '^' ? 1 : 0);
  const size_t colon = name.rfind(':');
  if (colon != std::string::npos) name.resize(colon);
  return name;
}

// Whether a VarHandleOp's shape attribute is exactly `shape`.
bool HasShape(const proto::NodeDef& node, const TensorShape& shape) {
  auto it = node.attr().find("shape");
  if (it == node.attr().end() || !it->second.has_shape()) return false;
  const auto& dims = it->second.shape().dim();
  if (dims.size() != shape.dims()) return false;
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i].size() != shape[i]) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<proto::GraphDef> FreezeGraphDef(
    const proto::GraphDef& graph_def,
    const std::map<std::string, Tensor>& values) {
  std::set<std::string> variables;
  for (const proto::NodeDef& node : graph_def.node()) {
    if (node.op() == "VarHandleOp") variables.insert(node.name());
  }
  proto::GraphDef frozen = graph_def;
  for (proto::NodeDef& node : *frozen.mutable_node()) {
    const std::string where = absl::StrCat("FreezeGraphDef: node '",
                                           node.name(), "' (", node.op(), ")");
    if (node.op() == "VarHandleOp") {
      auto it = values.find(node.name());
      if (it == values.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": no value for this variable"));
      }
      const Tensor& value = it->second;
      auto dtype = node.attr().find("dtype");
      if (dtype == node.attr().end() ||
          dtype->second.type() != static_cast<proto::DataType>(value.dtype()) ||
          !HasShape(node, value.shape())) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": the value is ", DataTypeString(value.dtype()), " ",
            value.shape().DebugString(),
            ", which is not the variable's dtype and shape"));
      }
      const bool had_shapes = node.attr().contains("_output_shapes");
      node.set_op("Const");
      node.clear_input();
      node.mutable_attr()->clear();
      auto& attrs = *node.mutable_attr();
      attrs["dtype"].set_type(static_cast<proto::DataType>(value.dtype()));
      *attrs["value"].mutable_tensor() = TensorAsProto(value);
      if (had_shapes) {
        auto* out = attrs["_output_shapes"].mutable_list()->add_shape();
        for (int64_t d : value.shape().dim_sizes()) out->add_dim()->set_size(d);
      }
      continue;
    }
    for (const std::string& input : node.input()) {
      if (!variables.contains(InputNode(input))) continue;
      if (node.op() != "ReadVariableOp") {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": uses variable '", InputNode(input),
                         "' other than by reading it (not an inference "
                         "graph)"));
      }
    }
    if (node.op() == "ReadVariableOp") {
      auto& attrs = *node.mutable_attr();
      auto dtype = attrs.find("dtype");
      if (dtype == attrs.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": has no dtype attribute"));
      }
      proto::AttrValue t = dtype->second;
      attrs.erase(dtype);
      attrs["T"] = std::move(t);
      node.set_op("Identity");
    }
  }
  return frozen;
}

}  // namespace graphgc
