// serialize/graph_def.h
//
// ExportGraphDef and ImportGraphDef: a graph (or the part of it some roots
// reach) as TensorFlow's GraphDef, the format TensorBoard draws and
// TensorFlow loads, and back.
//
// Export reads the graph and changes nothing in it, no collection included
// (the safe points are its callers': Fit, before the TensorBoard callback
// exports, and Save), and writes exactly the nodes the roots reach, inputs
// before the nodes that read them, in an order fixed by the graph's structure:
// identical graphs give identical GraphDefs, and DeterministicBytes() gives
// identical bytes. Node names, op types, input strings ("x", "x:1", "^x") and
// attribute names and types are TensorFlow's; constants are TensorProtos with
// their values in tensor_content (little-endian); every node also carries
// "_output_shapes" (TensorBoard labels edges with it; -1 for unknown dims).
//
// Import rebuilds a GraphDef through the op registry (ops/registry.h), in
// dependency order whatever the GraphDef's order. It is all or nothing: every
// node is validated and staged first (ops, names, inputs, cycles, attribute
// types, dtypes, tensor sizes, and each node's shape function run on its
// staged inputs), then all nodes are added at once by Graph::AddNodes, under
// one hold of the graph's lock; a failure at any step leaves the graph's
// nodes and names as they were, and no node is ever added and removed again.
// Errors are InvalidArgument (or AlreadyExists for a name the graph already
// uses) naming the node, e.g.
// "ImportGraphDef: node 'dense/MatMul' (MatMul): input 1 'w' is not defined".
//
// Import is a safe point: it calls graph.collector().MaybeCollect() first. A
// name is refused only when a live node holds it: if some imported name is
// taken, the graph collects once (a full collection) and checks again, so names
// held only by garbage (nodes whose handles were dropped) are freed and reused.
//
// A reserved scope (Graph::ReserveScope: a live layer's or model's, such as
// "dense" while layer 'dense' lives) belongs to its owner: import refuses,
// with AlreadyExists naming the scope and its owner, any node that would be
// named the scope or placed under "scope/", even when no node of that name
// exists yet, and builds nothing. The owner's own nodes would otherwise mix
// with foreign ones that the owner neither built nor keeps alive (its
// weights' names could be taken before it builds them). Import such a
// GraphDef with ImportOptions::prefix instead.
//
// Thread safety: both may be called from any thread; the graph locks. An
// import racing with other builders in the same graph may fail with
// AlreadyExists if they take one of its names first (checked again under
// the lock that adds the nodes); a scope reserved while the import runs is
// checked only before staging.
//
// The value codec is serialize/attr_codec.h (TensorAsProto), the renaming
// of ExportOptions::local_scope_names serialize/scope_renaming.h
// (ScopeRenaming, LocalizeScopeNames, RenameScopes); both are included here.
//
// Example:
//   GG_ASSIGN_OR_RETURN(proto::GraphDef def, ExportGraphDef({loss}));
//   Graph copy;
//   GG_ASSIGN_OR_RETURN(std::vector<NodeHandle> nodes,
//                       ImportGraphDef(def, copy));
#ifndef GRAPHGC_SERIALIZE_GRAPH_DEF_H_
#define GRAPHGC_SERIALIZE_GRAPH_DEF_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gc/handle.h"
#include "runtime/graph.h"
#include "serialize/attr_codec.h"
#include "serialize/graph.pb.h"
#include "serialize/scope_renaming.h"

namespace graphgc {

// What TensorFlow 2.x writes as versions.producer; TensorBoard and TensorFlow
// accept GraphDefs of this producer. Every exported node matches TensorFlow's
// OpDef at this producer (tests/serialize/op_defs_test.cc): attrs TensorFlow
// added later (MatMul's grad_a, grad_b) are left out while they hold their
// default.
inline constexpr int kGraphDefProducer = 1087;

struct ExportOptions {
  // Adds "_output_shapes" (list(shape), one per output) to every node.
  bool output_shapes = true;
  // Names as the exported part would have them in a fresh graph: every
  // name component that is a top-level scope of an exported node loses the
  // graph-wide uniquing suffix it got because other models share the graph
  // ("sequential_7" -> "sequential", "dense_14" -> "dense"), renumbered
  // within the export in (base, suffix) order. What TensorFlow 2 shows for
  // a Keras model, whose graph is a function graph of its own. Exports of
  // identical models then have identical bytes, whatever else the graph
  // holds. A scope the user named with a trailing "_<digits>" is
  // renumbered the same way. See LocalizeScopeNames (scope_renaming.h).
  bool local_scope_names = false;
};

// Exports the nodes `roots` reach (through data and control inputs). Every
// root must be a live handle of one graph (InvalidArgument otherwise); no
// roots give an empty GraphDef (with versions set). Does not collect.
absl::StatusOr<proto::GraphDef> ExportGraphDef(
    absl::Span<const NodeHandle> roots, ExportOptions options = {});
// The same with outputs as roots (their nodes).
absl::StatusOr<proto::GraphDef> ExportGraphDef(const std::vector<Output>& roots,
                                               ExportOptions options = {});

struct ImportOptions {
  // When not empty, every imported name becomes "<prefix>/<name>" (inputs
  // renamed alike). A name a live node of the graph already has, or one in a
  // reserved scope, is an error either way (AlreadyExists): names are never
  // uniqued, so they stay byte-identical.
  std::string prefix;
  // The most bytes the tensors of all imported attributes (Const's value,
  // any other attribute of type tensor) may take together. A tensor's bytes
  // are its declared shape's element count times its dtype's size, whatever
  // the TensorProto holds (one value repeated to fill the shape takes the
  // full size); all are added up before any is built. Over the budget:
  // ResourceExhausted naming the node and attribute that pass it, and the
  // budget; nothing is built.
  int64_t max_tensor_bytes = kMaxImportedTensorBytes;
};

// Imports `graph_def` into `graph` (see the file comment) and returns a
// strong handle to every imported node, in GraphDef order, so none is swept
// before the caller takes what it needs. "_output_shapes" is recomputed by
// the shape functions, not read; other attributes starting with '_' are kept;
// `device` is ignored. A typed TensorProto field may hold the full element
// count or a single value repeated to fill the shape (as TensorFlow writes
// splat constants); tensor_content must hold exactly the tensor's bytes.
// The tensors' memory is bounded by options.max_tensor_bytes; running out of
// memory anyway is ResourceExhausted (nothing throws).
absl::StatusOr<std::vector<NodeHandle>> ImportGraphDef(
    const proto::GraphDef& graph_def, Graph& graph, ImportOptions options = {});

// `graph_def` serialized with deterministic map order: identical GraphDefs
// give identical bytes (plain SerializeToString orders attr maps by hash).
std::string DeterministicBytes(const proto::GraphDef& graph_def);

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_GRAPH_DEF_H_
