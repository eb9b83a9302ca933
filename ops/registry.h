// ops/registry.h
//
// OpRegistry: every op type graphgc knows, by TensorFlow's type name. Each
// entry is the runtime's OpDef (kernel, gradient, stateful) plus what only
// builders and importers need: input and output arity, the attributes the op
// takes (name, TensorFlow attr type, default), a shape-and-dtype function and,
// for ops with per-node state (variables, random generators), a factory for
// the node's resource.
//
// BuildNode is the one generic way to add a registered op to a graph: it
// checks the inputs (valid, of this graph), the arity and the attributes
// (filling defaults, inferring "T" and "N" from the inputs), runs the shape
// function and only then adds the node. On any error the graph is unchanged.
// The typed builders of ops/ops.h and the GraphDef importer both go through
// it.
//
// Thread safety: GlobalOpRegistry() is built once (function-local static) and
// is immutable afterwards, so it may be read from any thread. An OpRegistry
// being filled by Register() is not synchronised.
//
// Example:
//   GG_ASSIGN_OR_RETURN(const RegisteredOp* op,
//                       GlobalOpRegistry().Lookup("MatMul"));
//   GG_ASSIGN_OR_RETURN(
//       NodeHandle n,
//       BuildNode(g, "MatMul", "dense/MatMul", {x, w}, {},
//                 {{"transpose_b", true}}));
#ifndef GRAPHGC_OPS_REGISTRY_H_
#define GRAPHGC_OPS_REGISTRY_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/attr_value.h"
#include "runtime/fusion.h"
#include "runtime/graph.h"
#include "runtime/node_resource.h"
#include "runtime/op_def.h"
#include "runtime/tensor.h"

namespace graphgc {

// What a shape function knows of one input at build time.
struct InputInfo {
  DataType dtype = DT_INVALID;
  TensorShape shape;  // static shape; dimensions may be -1
  // The value, when the input is a Const (lets Reshape, Fill, Sum with
  // constant axes, ... infer exact shapes).
  std::optional<Tensor> value;
  // When the input is the output of Shape(x): x's static shape (possibly
  // partial), so Reshape(g, Shape(x)) keeps x's known dimensions.
  std::optional<TensorShape> shape_value;
  // When the input is a DT_RESOURCE variable handle: the variable's dtype and
  // shape (from its VarHandleOp's attributes).
  DataType handle_dtype = DT_INVALID;
  TensorShape handle_shape;
};

// One output as a shape function infers it.
struct OutputInfo {
  DataType dtype = DT_INVALID;
  TensorShape shape;
};

// Returns one OutputInfo per output, or InvalidArgument with a message that
// does not repeat the op or node name (BuildNode prefixes both).
using ShapeFn = std::function<absl::StatusOr<std::vector<OutputInfo>>(
    const AttrMap& attrs, absl::Span<const InputInfo> inputs)>;

// Makes the per-node state of a new node (attributes already validated).
using ResourceFactory =
    std::function<absl::StatusOr<std::shared_ptr<NodeResource>>(
        const AttrMap& attrs)>;

// One attribute an op takes. `type` is TensorFlow's attr type name as
// AttrTypeName() spells it: "int", "float", "bool", "type", "string",
// "shape", "tensor", "list(int)", ...
struct AttrSpec {
  std::string name;
  std::string type;
  std::optional<AttrValue> default_value;  // nullopt: required
};

struct RegisteredOp {
  OpDef def;
  // Names of the data inputs, in order (TensorFlow's argument names). For a
  // variadic op the first name is a list (its length recorded in attribute
  // "N") followed by one input per further name (ConcatV2's `axis`), and the
  // op takes `min_inputs` or more inputs in all.
  std::vector<std::string> input_names;
  bool variadic = false;
  int min_inputs = 0;
  int num_outputs = 1;
  std::vector<AttrSpec> attrs;
  ShapeFn shape_fn;
  ResourceFactory make_resource;  // empty: the node has no resource
};

class OpRegistry {
 public:
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // Adds an op; AlreadyExists if its type is taken, InvalidArgument if the
  // entry is incomplete (no type, no shape function). The registry owns the
  // entry for its whole life, so OpDef pointers into it stay valid.
  absl::Status Register(RegisteredOp op);
  // Register, for the ops a library registers into a registry it fills
  // (ops/'s Register*Ops): a refusal is the library's own mistake, which no
  // caller could handle, so it is kept (the first one, in
  // builtin_ops_status()) rather than returned, the op is left out and the
  // rest of the registry still works.
  void RegisterBuiltin(RegisteredOp op);
  // Adds a fusion rule (runtime/fusion.h) to the OpDef of its chain's
  // first op, after the rules with longer chains. InvalidArgument, adding
  // nothing, if the chain has fewer than two ops, an op that is not one of
  // this registry's OpDefs, links that are neither empty nor one input
  // index >= 0 per link, or no binder.
  absl::Status RegisterFusion(FusionRule rule);
  // Adds every rule of `rules` as RegisterFusion does, or none: each is
  // checked first, and InvalidArgument naming the first refused one
  // ("rule 2: op 1 of the chain is not an OpDef of this registry") adds
  // nothing.
  absl::Status RegisterFusions(std::vector<FusionRule> rules);
  // NotFound naming the op type when it is not registered.
  absl::StatusOr<const RegisteredOp*> Lookup(absl::string_view type) const;
  // Registered type names, sorted.
  std::vector<std::string> ListOps() const;
  // What RegisterFusionRules returned when RegisterCoreOps filled this
  // registry: OK, or why ops/'s fusion rules are missing (their chains then
  // run unfused; every op still works). OK for a registry RegisterCoreOps
  // did not fill.
  const absl::Status& fusion_rules_status() const {
    return fusion_rules_status_;
  }
  // OK, or the first refusal RegisterBuiltin met, prefixed with
  // "RegisterBuiltin: " (e.g. AlreadyExists naming a type registered
  // twice): that op is missing from the registry.
  const absl::Status& builtin_ops_status() const { return builtin_ops_status_; }

 private:
  friend void RegisterCoreOps(OpRegistry& registry);  // records the status

  // The entry of `rule`'s first op, if RegisterFusion would add the rule;
  // otherwise why not (unprefixed: the callers name themselves).
  absl::StatusOr<RegisteredOp*> FusionHead(const FusionRule& rule) const;
  // Puts `rule` on `head`'s OpDef after the rules with longer chains.
  static void AddFusion(RegisteredOp& head, FusionRule rule);

  absl::flat_hash_map<std::string, std::unique_ptr<RegisteredOp>> ops_;
  absl::Status fusion_rules_status_;
  absl::Status builtin_ops_status_;
};

// Registers every op of ops/ (math, nn, array, concat, state, random, conv),
// then RegisterFusionRules, whose result the registry keeps
// (fusion_rules_status()): a rule that cannot be registered leaves its chain
// unfused and is never fatal.
void RegisterCoreOps(OpRegistry& registry);

// Registers ops/'s fusion rules (ops/fused_kernels.h: FusedMatMulRules and
// FusedMatMulReluGradRule; ops/fused_training_kernels.h:
// FusedLossGradientRule, FusedSizeCastRule and FusedScaleVariableRule) over
// `registry`'s OpDefs of their ops, all or none: NotFound naming the first
// of those ops `registry` lacks, or RegisterFusions' refusal.
absl::Status RegisterFusionRules(OpRegistry& registry);

// The process-wide registry with the core ops, built on first use.
const OpRegistry& GlobalOpRegistry();

// One input of a node being built: an existing output, or a tensor that
// becomes a Const node named "<node name>/<input name>" once every check has
// passed (so a failed build leaves no helper node behind).
struct BuildInput {
  BuildInput(Output o) : output(std::move(o)) {}    // NOLINT: implicit
  BuildInput(Tensor t) : constant(std::move(t)) {}  // NOLINT: implicit
  Output output;
  std::optional<Tensor> constant;
};

// A node of a registered op checked and inferred without a graph, for
// builders whose inputs do not exist yet (a GraphDef import stages every
// node, then adds them all with Graph::AddNodes): its attributes completed
// (defaults; "T" and "N" inferred from the inputs), one OutputInfo per
// output, and its resource (empty when the op has none).
struct StagedNode {
  const RegisteredOp* op = nullptr;
  AttrMap attrs;
  std::vector<OutputInfo> outputs;
  std::shared_ptr<NodeResource> resource;
};

// BuildNode's checks and inference without a graph: the name, the arity of
// `inputs` (what the shape function knows of each input), the attributes,
// the shape function and the resource. Errors are BuildNode's. A
// NamedResource's node name is left for the caller to set.
absl::StatusOr<StagedNode> StageNode(const OpRegistry& registry,
                                     absl::string_view op_type,
                                     absl::string_view name,
                                     absl::Span<const InputInfo> inputs,
                                     AttrMap attrs);

// What a shape function knows of `output` of a node of op `op_type` with
// `attrs`: its dtype and shape, a Const's value, a VarHandleOp's variable
// dtype and shape and, for a Shape node, `shape_input`, the static shape of
// the input it reads.
InputInfo DescribeOutput(absl::string_view op_type, const AttrMap& attrs,
                         const OutputInfo& output,
                         const std::optional<TensorShape>& shape_input);

// Validates and adds a node of a registered op (see the file comment). An
// empty `name` means the op type; taken names get "_1", "_2", ... appended.
// Errors name the op, the requested node name and what is wrong, e.g.
// "MatMul 'dense/MatMul': inner dimensions 3 vs 4". Attributes whose name
// starts with '_' are kept without checks (TensorFlow's private attributes).
absl::StatusOr<NodeHandle> BuildNode(Graph& graph, absl::string_view op_type,
                                     absl::string_view name,
                                     std::vector<BuildInput> inputs,
                                     std::vector<NodeHandle> control_inputs,
                                     AttrMap attrs);
absl::StatusOr<NodeHandle> BuildNode(const OpRegistry& registry, Graph& graph,
                                     absl::string_view op_type,
                                     absl::string_view name,
                                     std::vector<BuildInput> inputs,
                                     std::vector<NodeHandle> control_inputs,
                                     AttrMap attrs);

}  // namespace graphgc

#endif  // GRAPHGC_OPS_REGISTRY_H_
