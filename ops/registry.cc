#include "ops/registry.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/resources.h"
#include "runtime/algorithm.h"
#include "runtime/node_view.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// What a shape function may know about an existing output.
InputInfo DescribeInput(const Output& out) {
  const NodeView producer(out);
  std::optional<TensorShape> shape_input;
  if (producer.op() == "Shape" && !producer.inputs().empty()) {
    const int index = producer.inputs()[0].index;
    const NodeView x = producer.input(0);
    if (index < static_cast<int>(x.output_shapes().size())) {
      shape_input = x.output_shapes()[index];
    }
  }
  return DescribeOutput(producer.op(), producer.attrs(),
                        OutputInfo{.dtype = out.dtype(), .shape = out.shape()},
                        shape_input);
}

// The op and name of a node being staged or built, for its errors.
struct NodeToBuild {
  const RegisteredOp* op = nullptr;
  absl::string_view op_type;
  std::string base;  // the requested name, or the op type
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(op_type, " '", base, "': ", what));
  }
};

// Looks `op_type` up and checks the node name (Graph::AddNode's rule).
absl::StatusOr<NodeToBuild> Begin(const OpRegistry& registry,
                                  absl::string_view op_type,
                                  absl::string_view name) {
  GG_ASSIGN_OR_RETURN(const RegisteredOp* op, registry.Lookup(op_type));
  NodeToBuild node{
      .op = op,
      .op_type = op_type,
      .base = name.empty() ? std::string(op_type) : std::string(name)};
  if (!IsValidNodeName(node.base)) {
    return node.Error(absl::StrCat("invalid node name: ", kNodeNameRule));
  }
  return node;
}

// The name errors and helper constants give input `i` of `op`.
std::string InputName(const RegisteredOp& op, int i, int n) {
  if (op.variadic) {
    // The list, then the inputs after it (ConcatV2's axis).
    const int list = n - (static_cast<int>(op.input_names.size()) - 1);
    if (i < list) return absl::StrCat(op.input_names[0], "_", i);
    const size_t after = static_cast<size_t>(i - list + 1);
    if (after < op.input_names.size()) return op.input_names[after];
    return absl::StrCat(i);
  }
  return i < static_cast<int>(op.input_names.size()) ? op.input_names[i]
                                                     : absl::StrCat(i);
}

InputInfo DescribeConstant(const Tensor& t) {
  InputInfo info;
  info.dtype = t.dtype();
  info.shape = t.shape();
  info.value = t;
  return info;
}

}  // namespace

InputInfo DescribeOutput(absl::string_view op_type, const AttrMap& attrs,
                         const OutputInfo& output,
                         const std::optional<TensorShape>& shape_input) {
  InputInfo info;
  info.dtype = output.dtype;
  info.shape = output.shape;
  if (op_type == "Const") {
    auto it = attrs.find("value");
    if (it != attrs.end()) {
      if (const Tensor* t = std::get_if<Tensor>(&it->second)) info.value = *t;
    }
  } else if (op_type == "Shape") {
    info.shape_value = shape_input;
  } else if (op_type == "VarHandleOp") {
    info.handle_dtype = GetAttrOr<DataType>(attrs, "dtype", DT_INVALID);
    auto it = attrs.find("shape");
    if (it != attrs.end()) {
      if (const TensorShape* s = std::get_if<TensorShape>(&it->second)) {
        info.handle_shape = *s;
      }
    }
  }
  return info;
}

void OpRegistry::RegisterBuiltin(RegisteredOp op) {
  absl::Status s = Register(std::move(op));
  if (!s.ok() && builtin_ops_status_.ok()) {
    builtin_ops_status_ =
        absl::Status(s.code(), absl::StrCat("RegisterBuiltin: ", s.message()));
  }
}

absl::Status OpRegistry::Register(RegisteredOp op) {
  if (op.def.type.empty()) {
    return absl::InvalidArgumentError("OpRegistry::Register: empty op type");
  }
  if (!op.shape_fn) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OpRegistry::Register: op ", op.def.type, " has no shape function"));
  }
  if (op.variadic &&
      (op.input_names.empty() ||
       op.min_inputs < static_cast<int>(op.input_names.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("OpRegistry::Register: variadic op ", op.def.type,
                     " must name its list input and take at least one "
                     "input per name"));
  }
  std::string type = op.def.type;
  auto [it, inserted] =
      ops_.emplace(type, std::make_unique<RegisteredOp>(std::move(op)));
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("OpRegistry::Register: op ", type, " already registered"));
  }
  return absl::OkStatus();
}

absl::StatusOr<RegisteredOp*> OpRegistry::FusionHead(
    const FusionRule& rule) const {
  if (rule.chain.size() < 2 || !rule.bind) {
    return absl::InvalidArgumentError(
        "a rule needs a chain of two or more ops and a binder");
  }
  if (!rule.links.empty() && rule.links.size() != rule.chain.size() - 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("a chain of ", rule.chain.size(), " ops has ",
                     rule.chain.size() - 1, " links, not ", rule.links.size()));
  }
  for (size_t k = 0; k < rule.links.size(); ++k) {
    if (rule.links[k] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("link ", k, " names input ", rule.links[k]));
    }
  }
  RegisteredOp* head = nullptr;
  for (size_t k = 0; k < rule.chain.size(); ++k) {
    auto it = std::find_if(ops_.begin(), ops_.end(), [&](const auto& entry) {
      return &entry.second->def == rule.chain[k];
    });
    if (it == ops_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op ", k, " of the chain is not an OpDef of this registry"));
    }
    if (k == 0) head = it->second.get();
  }
  return head;
}

void OpRegistry::AddFusion(RegisteredOp& head, FusionRule rule) {
  std::vector<std::shared_ptr<const FusionRule>>& fusions = head.def.fusions;
  const size_t length = rule.chain.size();
  auto after = std::find_if(fusions.begin(), fusions.end(), [&](const auto& r) {
    return r->chain.size() < length;
  });
  fusions.insert(after, std::make_shared<const FusionRule>(std::move(rule)));
}

absl::Status OpRegistry::RegisterFusion(FusionRule rule) {
  absl::StatusOr<RegisteredOp*> head = FusionHead(rule);
  if (!head.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("OpRegistry::RegisterFusion: ", head.status().message()));
  }
  AddFusion(**head, std::move(rule));
  return absl::OkStatus();
}

absl::Status OpRegistry::RegisterFusions(std::vector<FusionRule> rules) {
  std::vector<RegisteredOp*> heads;
  heads.reserve(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    absl::StatusOr<RegisteredOp*> head = FusionHead(rules[i]);
    if (!head.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("OpRegistry::RegisterFusions: rule ", i, ": ",
                       head.status().message()));
    }
    heads.push_back(*head);
  }
  for (size_t i = 0; i < rules.size(); ++i) {
    AddFusion(*heads[i], std::move(rules[i]));
  }
  return absl::OkStatus();
}

absl::StatusOr<const RegisteredOp*> OpRegistry::Lookup(
    absl::string_view type) const {
  auto it = ops_.find(std::string(type));
  if (it == ops_.end()) {
    return absl::NotFoundError(
        absl::StrCat("op type '", type, "' is not registered"));
  }
  return it->second.get();
}

std::vector<std::string> OpRegistry::ListOps() const {
  std::vector<std::string> names;
  names.reserve(ops_.size());
  for (const auto& [name, op] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

const OpRegistry& GlobalOpRegistry() {
  static const OpRegistry* const registry = [] {
    auto* r = new OpRegistry();
    RegisterCoreOps(*r);
    if (!r->builtin_ops_status().ok()) {
      // An op of ops/ is missing: never fatal to the rest, never silent.
      std::fprintf(stderr, "graphgc: an op was not registered: %s\n",
                   std::string(r->builtin_ops_status().message()).c_str());
    }
    if (!r->fusion_rules_status().ok()) {
      // Not fatal (the chains run unfused), but never silent.
      std::fprintf(stderr, "graphgc: fusion rules not registered: %s\n",
                   std::string(r->fusion_rules_status().message()).c_str());
    }
    return r;
  }();
  return *registry;
}

absl::StatusOr<NodeHandle> BuildNode(Graph& graph, absl::string_view op_type,
                                     absl::string_view name,
                                     std::vector<BuildInput> inputs,
                                     std::vector<NodeHandle> control_inputs,
                                     AttrMap attrs) {
  return BuildNode(GlobalOpRegistry(), graph, op_type, name, std::move(inputs),
                   std::move(control_inputs), std::move(attrs));
}

absl::StatusOr<StagedNode> StageNode(const OpRegistry& registry,
                                     absl::string_view op_type,
                                     absl::string_view name,
                                     absl::Span<const InputInfo> infos,
                                     AttrMap attrs) {
  GG_ASSIGN_OR_RETURN(NodeToBuild node, Begin(registry, op_type, name));
  const RegisteredOp* op = node.op;
  auto error = [&](absl::string_view what) { return node.Error(what); };
  const std::string& base = node.base;
  const int n = static_cast<int>(infos.size());
  // A variadic op's list is its inputs but the named ones after it.
  const int list_size = n - (static_cast<int>(op->input_names.size()) - 1);
  if (op->variadic) {
    if (n < op->min_inputs) {
      return error(
          absl::StrCat("takes at least ", op->min_inputs, " inputs, got ", n));
    }
  } else if (n != static_cast<int>(op->input_names.size())) {
    return error(
        absl::StrCat("takes ", op->input_names.size(), " inputs, got ", n));
  }

  // Attributes: infer T and N, fill defaults, check types, no strangers.
  for (const AttrSpec& spec : op->attrs) {
    if (attrs.contains(spec.name)) continue;
    if (spec.name == "T" && spec.type == "type" && n > 0) {
      attrs[spec.name] = infos[0].dtype;
    } else if (spec.name == "N" && op->variadic) {
      attrs[spec.name] = static_cast<int64_t>(list_size);
    } else if (spec.default_value.has_value()) {
      attrs[spec.name] = *spec.default_value;
    } else {
      return error(absl::StrCat("attribute '", spec.name, "' (", spec.type,
                                ") is missing"));
    }
  }
  for (const auto& entry : attrs) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one
    // in a lambda.
    const std::string& key = entry.first;
    const AttrValue& value = entry.second;
    if (!key.empty() && key[0] == '_') continue;
    auto spec = std::find_if(op->attrs.begin(), op->attrs.end(),
                             [&](const AttrSpec& s) { return s.name == key; });
    if (spec == op->attrs.end()) {
      std::vector<std::string> known;
      for (const AttrSpec& s : op->attrs) known.push_back(s.name);
      return error(absl::StrCat("unknown attribute '", key,
                                "' (takes: ", absl::StrJoin(known, ", "), ")"));
    }
    if (AttrTypeName(value) != spec->type) {
      return error(absl::StrCat("attribute '", key, "' must be a ", spec->type,
                                ", got a ", AttrTypeName(value)));
    }
  }
  if (op->variadic && GetAttrOr<int64_t>(attrs, "N", list_size) !=
                          static_cast<int64_t>(list_size)) {
    return error(absl::StrCat(
        "attribute N is ", GetAttrOr<int64_t>(attrs, "N", list_size), " but ",
        list_size, " inputs were given to '", op->input_names[0], "'"));
  }

  absl::StatusOr<std::vector<OutputInfo>> outs = op->shape_fn(attrs, infos);
  if (!outs.ok()) return error(outs.status().message());
  if (static_cast<int>(outs->size()) != op->num_outputs) {
    return absl::InternalError(
        absl::StrCat(op_type, " '", base, "': shape function gave ",
                     outs->size(), " outputs, op has ", op->num_outputs));
  }
  for (const OutputInfo& o : *outs) {
    absl::Status s = TensorShape::Validate(o.shape.dim_sizes(), true);
    if (!s.ok()) return error(absl::StrCat("output shape: ", s.message()));
  }
  StagedNode staged{
      .op = op, .attrs = std::move(attrs), .outputs = *std::move(outs)};
  if (op->make_resource) {
    absl::StatusOr<std::shared_ptr<NodeResource>> r =
        op->make_resource(staged.attrs);
    if (!r.ok()) return error(r.status().message());
    staged.resource = *std::move(r);
  }
  return staged;
}

absl::StatusOr<NodeHandle> BuildNode(const OpRegistry& registry, Graph& graph,
                                     absl::string_view op_type,
                                     absl::string_view name,
                                     std::vector<BuildInput> inputs,
                                     std::vector<NodeHandle> control_inputs,
                                     AttrMap attrs) {
  // Begin checks the name first, so that helper Const nodes are never
  // created for a node whose own name would be rejected.
  GG_ASSIGN_OR_RETURN(NodeToBuild node, Begin(registry, op_type, name));
  const RegisteredOp* op = node.op;
  auto error = [&](absl::string_view what) { return node.Error(what); };
  const std::string& base = node.base;

  // Inputs: valid outputs of this graph, or constants.
  const int n = static_cast<int>(inputs.size());
  for (int i = 0; i < n; ++i) {
    if (inputs[i].constant.has_value()) continue;
    const Output& in = inputs[i].output;
    if (!in.valid()) {
      return error(absl::StrCat("input ", i, " (", InputName(*op, i, n),
                                ") is an empty Output"));
    }
    if (in.graph() != &graph) {
      return error(absl::StrCat("input ", i, " (", InputName(*op, i, n),
                                ") belongs to another graph"));
    }
    const NodeView producer(in);
    if (in.index() < 0 ||
        in.index() >= static_cast<int>(producer.output_types().size())) {
      return error(absl::StrCat("input ", i, " reads output ", in.index(),
                                " of '", producer.name(), "', which has ",
                                producer.output_types().size()));
    }
  }
  for (size_t i = 0; i < control_inputs.size(); ++i) {
    if (!control_inputs[i].valid()) {
      return error(absl::StrCat("control input ", i, " is an empty handle"));
    }
    if (control_inputs[i].graph() != &graph) {
      return error(
          absl::StrCat("control input ", i, " belongs to another graph"));
    }
  }

  std::vector<InputInfo> infos;
  infos.reserve(n);
  for (const BuildInput& in : inputs) {
    infos.push_back(in.constant.has_value() ? DescribeConstant(*in.constant)
                                            : DescribeInput(in.output));
  }
  GG_ASSIGN_OR_RETURN(StagedNode staged, StageNode(registry, op_type, base,
                                                   infos, std::move(attrs)));

  // Every check passed: create the constant inputs, then the node.
  NodeSpec spec;
  spec.op = std::string(op_type);
  spec.op_def = &op->def;
  spec.name = base;
  for (int i = 0; i < n; ++i) {
    if (!inputs[i].constant.has_value()) {
      spec.inputs.push_back(std::move(inputs[i].output));
      continue;
    }
    GG_ASSIGN_OR_RETURN(
        NodeHandle c,
        BuildNode(registry, graph, "Const",
                  absl::StrCat(base, "/", InputName(*op, i, n)), {}, {},
                  {{"value", *inputs[i].constant},
                   {"dtype", inputs[i].constant->dtype()}}));
    spec.inputs.emplace_back(std::move(c), 0);
  }
  spec.control_inputs = std::move(control_inputs);
  spec.attrs = std::move(staged.attrs);
  for (OutputInfo& o : staged.outputs) {
    spec.output_types.push_back(o.dtype);
    spec.output_shapes.push_back(std::move(o.shape));
  }
  spec.resource = staged.resource;
  GG_ASSIGN_OR_RETURN(NodeHandle handle, graph.AddNode(std::move(spec)));
  if (auto* named = dynamic_cast<NamedResource*>(staged.resource.get())) {
    named->set_node_name(NodeView(handle).name());
  }
  return handle;
}

}  // namespace graphgc
