// serialize/scope_renaming.h
//
// Local scope names for an exported GraphDef: the graph-wide uniquing
// suffixes of its top-level scopes ("sequential_7", "dense_14", given
// because other models share the graph) replaced by the names a fresh graph
// would have given ("sequential", "dense"), renumbered within the GraphDef.
// What ExportOptions::local_scope_names applies, and what the TensorBoard
// callback and Save use to show a model as TensorFlow 2 shows a Keras model.
//
// Thread safety: free functions over the caller's values; no shared state.
#ifndef GRAPHGC_SERIALIZE_SCOPE_RENAMING_H_
#define GRAPHGC_SERIALIZE_SCOPE_RENAMING_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "serialize/graph.pb.h"

namespace graphgc {

// A renaming of name components: graph-wide scope name -> local name
// ("sequential_7" -> "sequential"), holding only the ones that change.
using ScopeRenaming = absl::flat_hash_map<std::string, std::string>;

// Renames `graph_def` in place (node names and inputs): every top-level
// scope loses its graph-wide suffix and is renumbered within the GraphDef
// in (base, suffix) order; a scope the user named with a trailing
// "_<digits>" is renumbered the same way. Returns the renaming it applied,
// so names kept beside the graph (the Keras config the TensorBoard callback
// writes) can follow it.
ScopeRenaming LocalizeScopeNames(proto::GraphDef& graph_def);

// `name` with each '/'-separated component that `renaming` holds replaced.
std::string RenameScopes(absl::string_view name, const ScopeRenaming& renaming);

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_SCOPE_RENAMING_H_
