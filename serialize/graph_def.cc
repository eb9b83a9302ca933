#include "serialize/graph_def.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

#include "absl/container/fixed_array.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "ops/registry.h"
#include "runtime/algorithm.h"
#include "serialize/attr_value.pb.h"
#include "serialize/node_def.pb.h"
#include "serialize/tensor.pb.h"
#include "serialize/tensor_shape.pb.h"
#include "serialize/types.pb.h"
#include "serialize/versions.pb.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

constexpr absl::string_view kOutputShapes = "_output_shapes";
// Largest tensor an import may create (TensorFlow's 2 GiB proto limit).
constexpr int64_t kMaxTensorBytes = int64_t{1} << 31;

// ---------------------------------------------------------------------------
// Export

void ShapeToProto(const TensorShape& shape, proto::TensorShapeProto* out) {
  for (int64_t d : shape.dim_sizes()) out->add_dim()->set_size(d);
}

// The elements of `t` as little-endian bytes.
template <typename T>
std::string LittleEndianBytes(const Tensor& t) {
  absl::Span<const T> data = t.data<T>();
  std::string bytes(data.size() * sizeof(T), '\0');
  if (!data.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    for (size_t i = 0; i < bytes.size(); i += sizeof(T)) {
      std::reverse(bytes.begin() + i, bytes.begin() + i + sizeof(T));
    }
  }
  return bytes;
}

void TensorToProto(const Tensor& t, proto::TensorProto* out) {
  out->set_dtype(static_cast<proto::DataType>(t.dtype()));
  ShapeToProto(t.shape(), out->mutable_tensor_shape());
  switch (t.dtype()) {
    case DT_FLOAT:
      out->set_tensor_content(LittleEndianBytes<float>(t));
      break;
    case DT_INT32:
      out->set_tensor_content(LittleEndianBytes<int32_t>(t));
      break;
    case DT_INT64:
      out->set_tensor_content(LittleEndianBytes<int64_t>(t));
      break;
    case DT_BOOL:
      out->set_tensor_content(LittleEndianBytes<bool>(t));
      break;
    default:
      break;  // an uninitialized tensor: dtype and shape only
  }
}

void AttrToProto(const AttrValue& value, proto::AttrValue* out) {
  struct Visitor {
    proto::AttrValue* out;
    void operator()(int64_t v) const { out->set_i(v); }
    void operator()(float v) const { out->set_f(v); }
    void operator()(bool v) const { out->set_b(v); }
    void operator()(DataType v) const {
      out->set_type(static_cast<proto::DataType>(v));
    }
    void operator()(const std::string& v) const { out->set_s(v); }
    void operator()(const TensorShape& v) const {
      ShapeToProto(v, out->mutable_shape());
    }
    void operator()(const Tensor& v) const {
      TensorToProto(v, out->mutable_tensor());
    }
    void operator()(const std::vector<int64_t>& v) const {
      auto* list = out->mutable_list();
      for (int64_t x : v) list->add_i(x);
    }
    void operator()(const std::vector<float>& v) const {
      auto* list = out->mutable_list();
      for (float x : v) list->add_f(x);
    }
    void operator()(const std::vector<DataType>& v) const {
      auto* list = out->mutable_list();
      for (DataType x : v) list->add_type(static_cast<proto::DataType>(x));
    }
    void operator()(const std::vector<TensorShape>& v) const {
      auto* list = out->mutable_list();
      for (const TensorShape& x : v) ShapeToProto(x, list->add_shape());
    }
  };
  std::visit(Visitor{out}, value);
}

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
      const std::string& name = graph.NodeForRuntime(c).name;
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

// ---------------------------------------------------------------------------
// Import

// A "type" value graphgc can hold; the status says what is wrong otherwise.
absl::StatusOr<DataType> DataTypeFromProto(int value) {
  switch (value) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_INT32:
    case DT_STRING:
    case DT_INT64:
    case DT_BOOL:
    case DT_RESOURCE:
      return static_cast<DataType>(value);
    default:
      break;
  }
  if (value == DT_INVALID) {
    return absl::InvalidArgumentError("dtype DT_INVALID");
  }
  if (!proto::DataType_IsValid(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad dtype enum value ", value));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "dtype ", proto::DataType_Name(static_cast<proto::DataType>(value)),
      " is not supported"));
}

absl::StatusOr<TensorShape> ShapeFromProto(const proto::TensorShapeProto& proto,
                                           bool allow_unknown) {
  if (proto.unknown_rank()) {
    return absl::InvalidArgumentError("shape of unknown rank is not supported");
  }
  std::vector<int64_t> dims;
  dims.reserve(proto.dim_size());
  for (const auto& d : proto.dim()) dims.push_back(d.size());
  GG_RETURN_IF_ERROR(TensorShape::Validate(dims, allow_unknown));
  return TensorShape(dims);
}

// Fills a tensor of `n` elements from a typed repeated field holding n
// values, or one value to repeat.
template <typename T, typename Field>
absl::StatusOr<Tensor> FromTypedField(const TensorShape& shape, int64_t n,
                                      const Field& field,
                                      absl::string_view field_name) {
  const int64_t have = field.size();
  if (have != n && !(have == 1 && n > 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor of shape ", shape.DebugString(), " holds ", n,
                     " elements but ", field_name, " has ", have, " values"));
  }
  absl::FixedArray<T> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    values[i] = static_cast<T>(field.Get(have == 1 ? 0 : static_cast<int>(i)));
  }
  return Tensor::FromData<T>(shape, absl::MakeConstSpan(values));
}

template <typename T>
absl::StatusOr<Tensor> FromContent(const TensorShape& shape, int64_t n,
                                   const std::string& content) {
  // n * sizeof(T) is at most kMaxTensorBytes: TensorFromProto checked it.
  const int64_t needed = n * int64_t{sizeof(T)};
  if (static_cast<int64_t>(content.size()) != needed) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor of shape ", shape.DebugString(), " needs ", needed,
                     " bytes of tensor_content, got ", content.size()));
  }
  absl::FixedArray<T> values(static_cast<size_t>(n));
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = content[i] != 0;  // any non-zero byte is true
    }
  } else {
    std::string bytes = content;
    if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
      for (size_t i = 0; i < bytes.size(); i += sizeof(T)) {
        std::reverse(bytes.begin() + i, bytes.begin() + i + sizeof(T));
      }
    }
    if (n > 0) std::memcpy(values.data(), bytes.data(), bytes.size());
  }
  return Tensor::FromData<T>(shape, absl::MakeConstSpan(values));
}

absl::StatusOr<Tensor> TensorFromProto(const proto::TensorProto& proto) {
  GG_ASSIGN_OR_RETURN(DataType dtype, DataTypeFromProto(proto.dtype()));
  if (!IsTensorDataType(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a constant cannot hold dtype ", DataTypeString(dtype)));
  }
  GG_ASSIGN_OR_RETURN(TensorShape shape,
                      ShapeFromProto(proto.tensor_shape(), false));
  GG_ASSIGN_OR_RETURN(const int64_t n, shape.CheckedNumElements());
  int64_t bytes = 0;
  if (!MultiplySizes(n, DataTypeSize(dtype), &bytes, kMaxTensorBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor of shape ", shape.DebugString(), " is larger than 2 GiB"));
  }
  const bool content = !proto.tensor_content().empty();
  switch (dtype) {
    case DT_FLOAT:
      return content ? FromContent<float>(shape, n, proto.tensor_content())
                     : FromTypedField<float>(shape, n, proto.float_val(),
                                             "float_val");
    case DT_INT32:
      return content ? FromContent<int32_t>(shape, n, proto.tensor_content())
                     : FromTypedField<int32_t>(shape, n, proto.int_val(),
                                               "int_val");
    case DT_INT64:
      return content ? FromContent<int64_t>(shape, n, proto.tensor_content())
                     : FromTypedField<int64_t>(shape, n, proto.int64_val(),
                                               "int64_val");
    case DT_BOOL:
      return content
                 ? FromContent<bool>(shape, n, proto.tensor_content())
                 : FromTypedField<bool>(shape, n, proto.bool_val(), "bool_val");
    default:
      return absl::InternalError("unreachable dtype");
  }
}

// The kind of value a ListValue holds: "list(int)", ... ("list" when empty,
// "" when it mixes kinds).
std::string ListKind(const proto::AttrValue::ListValue& list) {
  std::vector<std::string> kinds;
  if (list.s_size() > 0) kinds.push_back("list(string)");
  if (list.i_size() > 0) kinds.push_back("list(int)");
  if (list.f_size() > 0) kinds.push_back("list(float)");
  if (list.b_size() > 0) kinds.push_back("list(bool)");
  if (list.type_size() > 0) kinds.push_back("list(type)");
  if (list.shape_size() > 0) kinds.push_back("list(shape)");
  if (list.tensor_size() > 0) kinds.push_back("list(tensor)");
  if (list.func_size() > 0) kinds.push_back("list(func)");
  if (kinds.empty()) return "list";
  if (kinds.size() > 1) return "";
  return kinds[0];
}

// TensorFlow's name of the attr type a proto value holds.
std::string ProtoAttrKind(const proto::AttrValue& v) {
  switch (v.value_case()) {
    case proto::AttrValue::kS:
      return "string";
    case proto::AttrValue::kI:
      return "int";
    case proto::AttrValue::kF:
      return "float";
    case proto::AttrValue::kB:
      return "bool";
    case proto::AttrValue::kType:
      return "type";
    case proto::AttrValue::kShape:
      return "shape";
    case proto::AttrValue::kTensor:
      return "tensor";
    case proto::AttrValue::kList: {
      std::string kind = ListKind(v.list());
      return kind.empty() ? "list of mixed types" : kind;
    }
    case proto::AttrValue::kFunc:
      return "func";
    case proto::AttrValue::kPlaceholder:
      return "placeholder";
    case proto::AttrValue::VALUE_NOT_SET:
      break;
  }
  return "no value";
}

// Converts `v` to graphgc's AttrValue of TensorFlow attr type `type` (as
// AttrTypeName spells it); an empty list converts to any list type.
absl::StatusOr<AttrValue> AttrFromProto(const proto::AttrValue& v,
                                        const std::string& type) {
  const std::string kind = ProtoAttrKind(v);
  const bool matches =
      kind == type || (kind == "list" && absl::StartsWith(type, "list("));
  if (!matches) {
    return absl::InvalidArgumentError(
        absl::StrCat("must be a ", type, ", got a ", kind));
  }
  if (type == "int") return AttrValue(int64_t{v.i()});
  if (type == "float") return AttrValue(v.f());
  if (type == "bool") return AttrValue(v.b());
  if (type == "string") return AttrValue(std::string(v.s()));
  if (type == "type") {
    GG_ASSIGN_OR_RETURN(DataType t, DataTypeFromProto(v.type()));
    return AttrValue(t);
  }
  if (type == "shape") {
    GG_ASSIGN_OR_RETURN(TensorShape s, ShapeFromProto(v.shape(), true));
    return AttrValue(std::move(s));
  }
  if (type == "tensor") {
    GG_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(v.tensor()));
    return AttrValue(std::move(t));
  }
  const auto& list = v.list();
  if (type == "list(int)") {
    return AttrValue(std::vector<int64_t>(list.i().begin(), list.i().end()));
  }
  if (type == "list(float)") {
    return AttrValue(std::vector<float>(list.f().begin(), list.f().end()));
  }
  if (type == "list(type)") {
    std::vector<DataType> types;
    for (int t : list.type()) {
      GG_ASSIGN_OR_RETURN(DataType d, DataTypeFromProto(t));
      types.push_back(d);
    }
    return AttrValue(std::move(types));
  }
  if (type == "list(shape)") {
    std::vector<TensorShape> shapes;
    for (const auto& s : list.shape()) {
      GG_ASSIGN_OR_RETURN(TensorShape shape, ShapeFromProto(s, true));
      shapes.push_back(std::move(shape));
    }
    return AttrValue(std::move(shapes));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("attr type ", type, " is not supported"));
}

// One GraphDef node, validated and ready to build.
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
    return Build(order);
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

  absl::StatusOr<std::vector<NodeHandle>> Build(const std::vector<int>& order) {
    std::vector<NodeHandle> handles(nodes_.size());
    std::vector<NodeId> created;
    absl::Status failure;
    for (int i : order) {
      const PendingNode& p = nodes_[i];
      std::vector<BuildInput> inputs;
      for (const auto& [producer, output] : p.inputs) {
        inputs.emplace_back(Output(handles[producer], output));
      }
      std::vector<NodeHandle> controls;
      for (int c : p.control_inputs) controls.push_back(handles[c]);
      absl::StatusOr<NodeHandle> h =
          BuildNode(graph_, p.def->op(), p.name, std::move(inputs),
                    std::move(controls), p.attrs);
      if (!h.ok()) {
        failure = Error(*p.def, h.status().message());
        break;
      }
      created.push_back(h->id());
      if (graph_.NodeForRuntime(*h).name != p.name) {
        // Another thread took the name after the check.
        failure = Error(
            *p.def, absl::StatusCode::kAlreadyExists,
            absl::StrCat("the graph already has a node named '", p.name, "'"));
        break;
      }
      handles[i] = *std::move(h);
    }
    if (failure.ok()) return handles;

    // Roll back: nothing but `created` refers to the new nodes once these
    // handles are gone, so they are removed without a collection.
    handles.clear();
    absl::Status removed = graph_.RemoveUnreachableForRollback(created);
    if (!removed.ok()) {
      return absl::Status(
          failure.code(),
          absl::StrCat(failure.message(), "; and the ", created.size(),
                       " nodes built before it are left to the collector: ",
                       removed.message()));
    }
    return failure;
  }

  const proto::GraphDef& def_;
  Graph& graph_;
  const ImportOptions& options_;
  absl::flat_hash_map<std::string, int> positions_;
  std::vector<PendingNode> nodes_;
};

}  // namespace

proto::TensorProto TensorAsProto(const Tensor& tensor) {
  proto::TensorProto proto;
  TensorToProto(tensor, &proto);
  return proto;
}

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

namespace {

// "dense_14" -> ("dense", 14); "dense" -> ("dense", 0). Only a trailing
// "_<digits>" with something before it counts as a uniquing suffix.
std::pair<std::string, int64_t> SplitSuffix(absl::string_view scope) {
  const size_t underscore = scope.rfind('_');
  if (underscore == absl::string_view::npos || underscore == 0 ||
      underscore + 1 == scope.size()) {
    return {std::string(scope), 0};
  }
  int64_t k = 0;
  for (size_t i = underscore + 1; i < scope.size(); ++i) {
    if (scope[i] < '0' || scope[i] > '9') return {std::string(scope), 0};
    k = k * 10 + (scope[i] - '0');
    if (k > (int64_t{1} << 40)) return {std::string(scope), 0};
  }
  return {std::string(scope.substr(0, underscore)), k};
}

}  // namespace

std::string RenameScopes(absl::string_view name, const ScopeRenaming& map) {
  std::string out;
  out.reserve(name.size());
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    if (slash == absl::string_view::npos) slash = name.size();
    absl::string_view part = name.substr(start, slash - start);
    auto it = map.find(part);
    if (!out.empty() || start > 0) out += '/';
    out += it == map.end() ? std::string(part) : it->second;
    start = slash + 1;
  }
  return out;
}

ScopeRenaming LocalizeScopeNames(proto::GraphDef& graph_def) {
  // The exported top-level scopes, grouped by base and ordered by suffix.
  std::map<std::string, std::set<int64_t>> by_base;
  absl::flat_hash_map<std::string, bool> seen;
  for (const proto::NodeDef& node : graph_def.node()) {
    absl::string_view name = node.name();
    std::string scope(name.substr(0, name.find('/')));
    if (seen.emplace(scope, true).second) {
      auto [base, k] = SplitSuffix(scope);
      by_base[base].insert(k);
    }
  }
  ScopeRenaming map;
  for (const auto& [base, suffixes] : by_base) {
    int64_t local = 0;
    for (int64_t k : suffixes) {
      const std::string from = k == 0 ? base : absl::StrCat(base, "_", k);
      const std::string to = local == 0 ? base : absl::StrCat(base, "_", local);
      ++local;
      if (from != to) map.emplace(from, to);
    }
  }
  if (map.empty()) return map;
  for (proto::NodeDef& node : *graph_def.mutable_node()) {
    node.set_name(RenameScopes(node.name(), map));
    for (std::string& input : *node.mutable_input()) {
      const bool control = !input.empty() && input[0] == '^';
      absl::string_view body = absl::string_view(input).substr(control ? 1 : 0);
      const size_t colon = body.rfind(':');
      std::string port;
      if (colon != absl::string_view::npos) {
        port = std::string(body.substr(colon));
        body = body.substr(0, colon);
      }
      input = absl::StrCat(control ? "^" : "", RenameScopes(body, map), port);
    }
  }
  return map;
}

absl::StatusOr<proto::GraphDef> ExportGraphDef(const std::vector<Output>& roots,
                                               ExportOptions options) {
  std::vector<NodeHandle> handles;
  handles.reserve(roots.size());
  for (const Output& o : roots) handles.push_back(o.handle());
  return ExportGraphDef(absl::MakeConstSpan(handles), options);
}

absl::StatusOr<std::vector<NodeHandle>> ImportGraphDef(
    const proto::GraphDef& graph_def, Graph& graph, ImportOptions options) {
  graph.MaybeCollect();  // an import builds: a safe point
  return Importer(graph_def, graph, options).Run();
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
