// runtime/name_index.h
//
// NameIndex: a graph's name table. It finds the live node of a name, picks
// unique names (TensorFlow's rule: the requested name if free, else
// name_1, name_2, ..., starting after the highest suffix given for that
// name among live nodes) and says whether a scope is in use.
//
// Names are grouped by top-level scope (the text before the first '/', or
// "" for a name without one); each group has its own small tables and
// every node points to its group. A model's nodes share a few top-level
// scopes ("sequential_3", "dense_6", ...), so when a collection sweeps a
// dropped model its groups die whole: they are freed with no lookup per
// node, and the nodes of groups that live on are looked up in tables the
// size of their scope, not of the graph. Removing a model's names costs
// the same with 200 models alive as with one.
//
// Invariants: a node is in the index from Insert() to Erase(), under its
// name, in the group of its top-level scope, and node.name_group points
// to that group; a group exists exactly while it has a node.
// Not thread-safe: the graph calls it under its mutex.
#ifndef GRAPHGC_RUNTIME_NAME_INDEX_H_
#define GRAPHGC_RUNTIME_NAME_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/node.h"

namespace graphgc {

class NameIndex {
 public:
  NameIndex();
  ~NameIndex();
  NameIndex(const NameIndex&) = delete;
  NameIndex& operator=(const NameIndex&) = delete;

  // The slot of the live node named `name`.
  std::optional<uint32_t> Find(absl::string_view name) const;
  bool Contains(absl::string_view name) const { return Find(name).has_value(); }
  // The name a node asking for `base` gets.
  std::string Unique(absl::string_view base) const;
  // Whether a live node is named `scope` or has a name under "scope/".
  bool IsScopeInUse(absl::string_view scope) const;

  // Adds `node` (its name set, name.substr(0, base_length) the name it
  // asked for) living in `slot`; sets node.name_group.
  void Insert(Node& node, uint32_t slot);
  // Removes `nodes`, each in the index and still intact.
  void Erase(absl::Span<Node* const> nodes);

  // Entries in all tables, for tests that bookkeeping stays bounded.
  size_t size() const;

 private:
  // A top-level scope's names (defined in name_index.cc).
  using Group = NameGroup;

  const Group* FindGroup(absl::string_view name) const;

  absl::flat_hash_map<std::string, std::unique_ptr<Group>> groups_;
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NAME_INDEX_H_
