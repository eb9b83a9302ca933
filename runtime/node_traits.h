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
// A Node holds a NodeTraits instead: one pointer to an immutable,
// reference-counted record that every node of the graph with equal parts
// shares. The node keeps its own name, inputs, control inputs and
// resource.
//
// NodeTraitsTable is the graph's table of those records. Intern() gives
// the record equal to its arguments, adding one if there is none. Equal
// means the same op type and output types and shapes, and the same
// attribute keys with values of the same type and the same bits: 0.0f and
// -0.0f differ, and a NaN equals the same NaN. Records whose attributes
// hold a tensor ("value" of a Const) are never shared: comparing tensors
// would read their buffers, and constants rarely repeat.
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
//      last pruning) + 1 entries: when it has doubled since then it drops
//      the records no node holds, so a graph whose models come and go keeps
//      a bounded table.
//
// Thread safety: NodeTraits is a value type like NodeHandle: distinct
// objects may be copied and destroyed from any threads at once (the count
// is atomic), and a record may be read from any thread. NodeTraitsTable is
// not thread-safe: the graph calls it under its mutex.
#ifndef GRAPHGC_RUNTIME_NODE_TRAITS_H_
#define GRAPHGC_RUNTIME_NODE_TRAITS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
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
// One stored record and the count of NodeTraits (and table entry) pointing
// at it.
struct Record {
  Record(std::string o, AttrMap a, absl::Span<const DataType> t,
         absl::Span<const TensorShape> s, size_t h)
      : hash(h),
        op(std::move(o)),
        attrs(std::move(a)),
        output_types(t.begin(), t.end()),
        output_shapes(s.begin(), s.end()) {}
  std::atomic<int64_t> refs{1};
  const size_t hash;  // of the parts, when the table holds it; else 0
  const std::string op;
  const AttrMap attrs;
  const absl::InlinedVector<DataType, 1> output_types;
  const absl::InlinedVector<TensorShape, 1> output_shapes;
};
}  // namespace node_traits_internal

class NodeTraits {
 public:
  // No op type, attributes or outputs (nothing counted).
  NodeTraits() = default;
  NodeTraits(const NodeTraits& other) : record_(other.record_) {
    if (record_ != nullptr) {
      record_->refs.fetch_add(1, std::memory_order_relaxed);
    }
  }
  NodeTraits(NodeTraits&& other) noexcept
      : record_(std::exchange(other.record_, nullptr)) {}
  NodeTraits& operator=(const NodeTraits& other) {
    if (this != &other) *this = NodeTraits(other);
    return *this;
  }
  NodeTraits& operator=(NodeTraits&& other) noexcept {
    if (this != &other) {
      Release();
      record_ = std::exchange(other.record_, nullptr);
    }
    return *this;
  }
  ~NodeTraits() { Release(); }

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
  // Takes over one reference already counted in `record`.
  explicit NodeTraits(Record* record) : record_(record) {}
  const Record& record() const {
    return record_ != nullptr ? *record_ : Empty();
  }
  void Release() {
    // acq_rel: every holder's reads of the record happen before it goes.
    if (record_ != nullptr &&
        record_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete record_;
    }
  }
  static const Record& Empty();

  Record* record_ = nullptr;  // nullptr: Empty()
};

class NodeTraitsTable {
 public:
  NodeTraitsTable() = default;
  ~NodeTraitsTable();
  NodeTraitsTable(const NodeTraitsTable&) = delete;
  NodeTraitsTable& operator=(const NodeTraitsTable&) = delete;

  // The record of these parts, shared with every live node of equal parts
  // (see the file comment); a record of its own when `attrs` holds a
  // tensor.
  NodeTraits Intern(std::string op, AttrMap attrs,
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
  struct RecordHash {
    using is_transparent = void;
    size_t operator()(const Record* r) const { return r->hash; }
    size_t operator()(const Probe& p) const { return p.hash; }
  };
  struct RecordEq {
    using is_transparent = void;
    bool operator()(const Record* a, const Record* b) const;
    bool operator()(const Record* a, const Probe& b) const;
    bool operator()(const Probe& a, const Record* b) const {
      return (*this)(b, a);
    }
  };

  // Drops the records no NodeTraits points at but the table's own.
  void Prune();

  absl::flat_hash_set<Record*, RecordHash, RecordEq> records_;
  size_t prune_at_ = 64;
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NODE_TRAITS_H_
