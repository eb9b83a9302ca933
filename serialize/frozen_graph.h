// serialize/frozen_graph.h
//
// FreezeGraphDef: an exported inference GraphDef with its variables folded
// into constants, as TensorFlow's convert_variables_to_constants does: each
// VarHandleOp becomes a Const holding the variable's value (same name), each
// ReadVariableOp an Identity of it (same name), so the GraphDef needs no
// variable, no initialiser and no session state: `tf.compat.v1.
// import_graph_def` loads it and runs it with only its Placeholders fed.
//
// It works on a GraphDef as ExportGraphDef wrote it (serialize/graph_def.h)
// and changes nothing else: node order, other nodes and their attributes
// ("_output_shapes" included, which becomes the value's shape on the new
// Const) stay as they were.
//
// Thread safety: a pure function.
//
// Example:
//   GG_ASSIGN_OR_RETURN(proto::GraphDef def, ExportGraphDef({output}));
//   GG_ASSIGN_OR_RETURN(proto::GraphDef frozen,
//                       FreezeGraphDef(def, {{"dense/kernel", kernel}}));
#ifndef GRAPHGC_SERIALIZE_FROZEN_GRAPH_H_
#define GRAPHGC_SERIALIZE_FROZEN_GRAPH_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/tensor.h"
#include "serialize/graph.pb.h"

namespace graphgc {

// `graph_def` with every VarHandleOp replaced by a Const of its value in
// `values` (keyed by the VarHandleOp's node name) and every ReadVariableOp
// by an Identity. InvalidArgument, naming the node, when a variable has no
// value, a value's dtype or shape differs from the variable's, or a node
// other than ReadVariableOp uses a variable (an assignment or an optimizer
// update: not an inference graph). Values no variable uses are ignored.
absl::StatusOr<proto::GraphDef> FreezeGraphDef(
    const proto::GraphDef& graph_def,
    const std::map<std::string, Tensor>& values);

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_FROZEN_GRAPH_H_
