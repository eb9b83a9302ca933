// runtime/node_traits.h
//
// NodeTraits and NodeTraitsTable: what a node has in common with the
// graph's other nodes of its kind (its op type, attributes, output types
// and output shapes), stored once per distinct set.
//
// A model's nodes repeat a few kinds ({MatMul, T: float, transpose_a:
// false, transpose_b: false, one float output of shape [?,64]}, ...), and
// these parts were most of a node's memory: a 240-byte B-tree node for two
// attributes and 120 bytes of op, types and shapes inside a 264-byte Node.
// A Node holds a NodeTraits instead: a std::shared_ptr to an immutable
// record that every node of the graph with equal parts shares. The node keeps
// its own name, inputs, control inputs and resource.
//
// NodeTraitsTable is the graph's table of those records. Intern() gives
// the record equal to its arguments, adding one if there is none. Equal
// means the same op type and output types and shapes, and the same
// attribute keys with values of the same type and the same bits: 0.0f and
// -0.0f differ, and a NaN equals the same NaN. Records whose attributes
// hold a tensor ("value" of a Const) are never shared: comparing tensors
// would read their buffers, and constants rarely repeat.
//
// Intern() first compares its arguments with the record it gave last for
// an op type like theirs, and hashes them only when that differs: hashing
// and probing are a large share of building a graph whose nodes are
// alike, and a model's nodes repeat a few kinds in turn.
//
// Postconditions and invariants:
//   1. A record never changes while any NodeTraits points at it, and lives
//      until the last one pointing at it goes (the table's own reference
//      included): a node's traits live as long as the node, whatever
//      happens to the table or the graph.
//   2. Intern(op, attrs, types, shapes) reads back as its arguments (equal
//      as above), and two Intern() results of equal arguments without a
//      tensor point at the same record while both live.
//   3. The table holds at most max(64, 2 x the records nodes held at its
//      last pruning) entries: when it has reached that it drops the records
//      no node holds before it adds one, so a graph whose models come and
//      go keeps a bounded table.
//
// Thread safety: NodeTraits is a value type like NodeHandle: distinct
// objects may be copied and destroyed from any threads at once (as
// shared_ptr copies may), and a record may be read from any thread.
// NodeTraitsTable is not thread-safe: the graph calls it under its mutex.
#ifndef GRAPHGC_RUNTIME_NODE_TRAITS_H_
#define GRAPHGC_RUNTIME_NODE_TRAITS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/attr_value.h"
#include "runtime/tensor.h"

namespace graphgc {

namespace node_traits_internal {
// One stored record. Held through std::shared_ptr<const Record>: by every
// NodeTraits pointing at it and by the table while the table keeps it.
struct Record {
  Record(std::string o, AttrMap a, absl::Span<const DataType> t,
         absl::Span<const TensorShape> s, size_t h)
      : hash(h),
        op(std::move(o)),
        attrs(std::move(a)),
        output_types(t.begin(), t.end()),
        output_shapes(s.begin(), s.end()) {}
  const size_t hash;  // of the parts, when the table holds it; else 0
  const std::string op;
  const AttrMap attrs;
  const absl::InlinedVector<DataType, 1> output_types;
  const absl::InlinedVector<TensorShape, 1> output_shapes;
};
}  // namespace node_traits_internal

class NodeTraits {
 public:
  // No op type, attributes or outputs.
  NodeTraits() = default;

  const std::string& op() const { return record().op; }
  const AttrMap& attrs() const { return record().attrs; }
  absl::Span<const DataType> output_types() const {
    return record().output_types;
  }
  absl::Span<const TensorShape> output_shapes() const {
    return record().output_shapes;
  }

  // Whether `a` and `b` point at the same record (for tests).
  static bool SharedForTesting(const NodeTraits& a, const NodeTraits& b) {
    return a.record_ == b.record_;
  }

 private:
  friend class NodeTraitsTable;
  using Record = node_traits_internal::Record;
  explicit NodeTraits(std::shared_ptr<const Record> record)
      : record_(std::move(record)) {}
  const Record& record() const {
    return record_ != nullptr ? *record_ : Empty();
  }
  static const Record& Empty();

  std::shared_ptr<const Record> record_;  // nullptr: Empty()
};

class NodeTraitsTable {
 public:
  NodeTraitsTable() = default;
  NodeTraitsTable(const NodeTraitsTable&) = delete;
  NodeTraitsTable& operator=(const NodeTraitsTable&) = delete;

  // The record of these parts, shared with every live node of equal parts
  // (see the file comment); a record of its own when `attrs` holds a
  // tensor.
  NodeTraits Intern(std::string op, AttrMap attrs,
                    absl::Span<const DataType> output_types,
                    absl::Span<const TensorShape> output_shapes);
  // The same record, copying `op` and `attrs` only when it makes a new
  // one: a caller that describes many nodes with one attribute map (the
  // graph's AddNode(const NodeSpec&)) pays no copy per node.
  NodeTraits InternCopy(absl::string_view op, const AttrMap& attrs,
                        absl::Span<const DataType> output_types,
                        absl::Span<const TensorShape> output_shapes);

  // Records the table holds (some may be held by no node until its next
  // pruning), for tests that it stays bounded.
  size_t size() const { return records_.size(); }

 private:
  using Record = node_traits_internal::Record;
  // The parts being looked up, with their hash.
  struct Probe {
    absl::string_view op;
    const AttrMap* attrs;
    absl::Span<const DataType> output_types;
    absl::Span<const TensorShape> output_shapes;
    size_t hash;
  };
  using Held = std::shared_ptr<const Record>;
  struct RecordHash {
    using is_transparent = void;
    size_t operator()(const Held& r) const { return r->hash; }
    size_t operator()(const Probe& p) const { return p.hash; }
  };
  struct RecordEq {
    using is_transparent = void;
    bool operator()(const Held& a, const Held& b) const;
    bool operator()(const Held& a, const Probe& b) const;
    bool operator()(const Probe& a, const Held& b) const {
      return (*this)(b, a);
    }
  };

  // Drops the records no NodeTraits points at (held by the table only).
  void Prune();
  // Intern and InternCopy: moves from `op` and `attrs` (rvalues) or
  // copies them (lvalues, views) into a new record only.
  template <typename Op, typename Attrs>
  NodeTraits InternImpl(Op&& op, Attrs&& attrs,
                        absl::Span<const DataType> output_types,
                        absl::Span<const TensorShape> output_shapes);

  // The entry of recent_ that parts with op type `op` use.
  static size_t RecentIndex(absl::string_view op);

  absl::flat_hash_set<Held, RecordHash, RecordEq> records_;
  size_t prune_at_ = 64;
  // The record each op type (by RecentIndex) interned last, or nullptr:
  // compared with before the parts are hashed, as a model's layers and a
  // loop's nodes repeat one kind after another. Each is also in records_;
  // Prune clears them first, so they keep no record alive.
  static constexpr size_t kRecent = 8;
  Held recent_[kRecent];
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NODE_TRAITS_H_
