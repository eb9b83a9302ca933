#include "runtime/node_traits.h"

#include <algorithm>
#include <bit>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/hash/hash.h"

namespace graphgc {
namespace {

// A float by its bits: the equality and hash records are shared by.
uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

// Feeds one attribute value into a hash state. A tensor adds nothing but
// sets `holds_tensor`: such a record is never shared, so its hash is not
// used.
template <typename H>
H HashValue(H h, const AttrValue& value, bool& holds_tensor) {
  h = H::combine(std::move(h), value.index());
  return std::visit(
      [&h, &holds_tensor](const auto& v) -> H {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, float>) {
          return H::combine(std::move(h), Bits(v));
        } else if constexpr (std::is_same_v<T, TensorShape>) {
          return H::combine(std::move(h), v.dim_sizes());
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          h = H::combine(std::move(h), v.size());
          for (float f : v) h = H::combine(std::move(h), Bits(f));
          return std::move(h);
        } else if constexpr (std::is_same_v<T, std::vector<TensorShape>>) {
          h = H::combine(std::move(h), v.size());
          for (const TensorShape& s : v) {
            h = H::combine(std::move(h), s.dim_sizes());
          }
          return std::move(h);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          holds_tensor = true;
          return std::move(h);
        } else {
          return H::combine(std::move(h), v);
        }
      },
      value);
}

// The parts of a record as absl::Hash hashes them. The same pass over the
// attributes finds whether one holds a tensor (`holds_tensor`), so a spec's
// attributes are walked once to be hashed, not once more before.
struct HashableParts {
  absl::string_view op;
  const AttrMap& attrs;
  absl::Span<const DataType> output_types;
  absl::Span<const TensorShape> output_shapes;
  bool& holds_tensor;

  template <typename H>
  friend H AbslHashValue(H h, const HashableParts& p) {
    h = H::combine(std::move(h), p.op, p.output_types, p.attrs.size());
    for (const TensorShape& s : p.output_shapes) {
      h = H::combine(std::move(h), s.dim_sizes());
    }
    for (const auto& [key, value] : p.attrs) {
      h = HashValue(H::combine(std::move(h), key), value, p.holds_tensor);
    }
    return h;
  }
};

bool SameValue(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&b](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, float>) {
          return Bits(x) == Bits(y);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          return std::equal(
              x.begin(), x.end(), y.begin(), y.end(),
              [](float p, float q) { return Bits(p) == Bits(q); });
        } else if constexpr (std::is_same_v<T, Tensor>) {
          return false;  // never shared
        } else {
          return x == y;
        }
      },
      a);
}

bool SameAttrs(const AttrMap& a, const AttrMap& b) {
  // Sizes first: a B-tree's iterators are not random-access, so
  // std::equal would walk both maps to find they differ. Counted, so the
  // iterators stop on the last entries: stepping past a B-tree node's last
  // entry is the iterator's slow path, and every node built compares its
  // attributes here.
  const size_t size = a.size();
  if (size != b.size()) return false;
  auto x = a.begin();
  auto y = b.begin();
  for (size_t i = 0; i < size; ++i) {
    if (i > 0) {
      ++x;
      ++y;
    }
    if (x->first != y->first || !SameValue(x->second, y->second)) {
      return false;
    }
  }
  return true;
}

bool SameParts(const node_traits_internal::Record& r, absl::string_view op,
               const AttrMap& attrs, absl::Span<const DataType> types,
               absl::Span<const TensorShape> shapes) {
  return r.op == op && absl::Span<const DataType>(r.output_types) == types &&
         absl::Span<const TensorShape>(r.output_shapes) == shapes &&
         SameAttrs(r.attrs, attrs);
}

}  // namespace

const NodeTraits::Record& NodeTraits::Empty() {
  static const Record* const empty = new Record("", {}, {}, {}, 0);
  return *empty;
}

bool NodeTraitsTable::RecordEq::operator()(const Held& a, const Held& b) const {
  return a == b ||
         (a->hash == b->hash &&
          SameParts(*a, b->op, b->attrs, b->output_types, b->output_shapes));
}

bool NodeTraitsTable::RecordEq::operator()(const Held& a,
                                           const Probe& b) const {
  return a->hash == b.hash &&
         SameParts(*a, b.op, *b.attrs, b.output_types, b.output_shapes);
}

size_t NodeTraitsTable::RecentIndex(absl::string_view op) {
  // Length and first and last bytes: enough to keep a model's few op
  // types apart, and no hash of the whole string.
  if (op.empty()) return 0;
  const size_t mix = op.size() * 5 + static_cast<unsigned char>(op.front()) +
                     static_cast<unsigned char>(op.back()) * 3;
  return mix % kRecent;
}

template <typename Op, typename Attrs>
NodeTraits NodeTraitsTable::InternImpl(
    Op&& op, Attrs&& attrs, absl::Span<const DataType> output_types,
    absl::Span<const TensorShape> output_shapes) {
  // The same parts as the last record of this op type: no hash, no probe
  // (a record in recent_ never holds a tensor, so it is one to share).
  Held& recent = recent_[RecentIndex(op)];
  if (recent != nullptr &&
      SameParts(*recent, op, attrs, output_types, output_shapes)) {
    return NodeTraits(recent);
  }
  bool holds_tensor = false;
  const size_t hash = absl::Hash<HashableParts>()(
      HashableParts{op, attrs, output_types, output_shapes, holds_tensor});
  if (holds_tensor) {
    return NodeTraits(std::make_shared<const Record>(
        std::string(std::forward<Op>(op)), AttrMap(std::forward<Attrs>(attrs)),
        output_types, output_shapes, 0));
  }
  if (auto it =
          records_.find(Probe{op, &attrs, output_types, output_shapes, hash});
      it != records_.end()) {
    recent = *it;
    return NodeTraits(recent);
  }
  if (records_.size() >= prune_at_) Prune();  // clears `recent` too
  auto record = std::make_shared<const Record>(
      std::string(std::forward<Op>(op)), AttrMap(std::forward<Attrs>(attrs)),
      output_types, output_shapes, hash);
  records_.insert(record);
  recent = record;
  return NodeTraits(std::move(record));
}

NodeTraits NodeTraitsTable::Intern(
    std::string op, AttrMap attrs, absl::Span<const DataType> output_types,
    absl::Span<const TensorShape> output_shapes) {
  return InternImpl(std::move(op), std::move(attrs), output_types,
                    output_shapes);
}

NodeTraits NodeTraitsTable::InternCopy(
    absl::string_view op, const AttrMap& attrs,
    absl::Span<const DataType> output_types,
    absl::Span<const TensorShape> output_shapes) {
  return InternImpl(op, attrs, output_types, output_shapes);
}

void NodeTraitsTable::Prune() {
  // A use count of 1 is the table's own: no NodeTraits points at the
  // record, and none can appear but through Intern, which the caller's
  // lock excludes; the count cannot rise meanwhile, as a copy needs a
  // NodeTraits to copy from. recent_'s references go first.
  for (Held& recent : recent_) recent.reset();
  absl::erase_if(records_,
                 [](const Held& record) { return record.use_count() == 1; });
  prune_at_ = std::max<size_t>(64, 2 * records_.size());
}

}  // namespace graphgc
