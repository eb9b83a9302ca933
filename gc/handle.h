// gc/handle.h
//
// NodeHandle and WeakNodeHandle: the only ways user code holds a node.
//
// A NodeHandle is a strong, copyable reference: while any copy exists the
// node, and everything it reaches through data or control inputs, survives
// collection. A handle counts itself in one count: its node's root count
// (Slot), or, when it carries an owner label ("Sequential 'sequential_3'",
// naming who holds it in ExplainRetention and leak reports), the count of
// that label's entry for the node (SlotLabel), which holds one root count
// for all of them. Copies keep the label. Copying or destroying a handle
// takes no lock, labelled or not: on the graph's home thread (the thread
// that made the graph) it is plain stores, plus one exchange for a destroy;
// on any other thread one atomic increment or decrement (gc/root_count.h).
// Only making a labelled handle (WithOwner) and destroying the last handle
// of one label on one node take the heap's label lock, to add or remove
// that entry, and only a node's last handle going counts a drop for the
// collector (Heap::drops()).
// == compares identity (same node).
//
// A WeakNodeHandle does not keep its node alive; Lock() gives a strong
// handle until the node is swept and an empty optional after.
//
// Thread safety: distinct handles may be used from any threads at once, also
// while the graph collects. A single handle object is not synchronised.
// A handle may outlive its Graph, but only to be destroyed, reset, moved or
// copied: graph() then returns nullptr and WeakNodeHandle::Lock() an empty
// optional; describing or running its node is undefined (see
// runtime/graph.h).
#ifndef GRAPHGC_GC_HANDLE_H_
#define GRAPHGC_GC_HANDLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "gc/node_id.h"
#include "gc/root_count.h"

namespace graphgc {

class Graph;

namespace gc {
class Heap;
struct SlotLabel;
}  // namespace gc

class NodeHandle {
 public:
  NodeHandle() = default;
  // Counts the copy where `other` counts itself; `other` keeps the count
  // above zero meanwhile, so no collection can see it reach zero.
  NodeHandle(const NodeHandle& other)
      : heap_(other.heap_),
        count_(other.count_),
        id_(other.id_),
        label_(other.label_) {
    if (count_.valid()) CountCopy();
  }
  NodeHandle(NodeHandle&& other) noexcept
      : heap_(std::exchange(other.heap_, nullptr)),
        count_(std::exchange(other.count_, gc::CountRef())),
        id_(std::exchange(other.id_, NodeId())),
        label_(std::exchange(other.label_, nullptr)) {}
  NodeHandle& operator=(const NodeHandle& other) {
    if (this != &other) *this = NodeHandle(other);
    return *this;
  }
  NodeHandle& operator=(NodeHandle&& other) noexcept {
    if (this != &other) {
      Drop();
      heap_ = std::exchange(other.heap_, nullptr);
      count_ = std::exchange(other.count_, gc::CountRef());
      id_ = std::exchange(other.id_, NodeId());
      label_ = std::exchange(other.label_, nullptr);
    }
    return *this;
  }
  ~NodeHandle() { Drop(); }

  // Whether this handle refers to a node (a default handle does not).
  bool valid() const { return count_.valid(); }
  explicit operator bool() const { return valid(); }

  // The graph holding the node; nullptr for an empty handle, and once the
  // graph was destroyed.
  Graph* graph() const;
  NodeId id() const { return id_; }

  // A copy that carries `owner` as its owner label (for diagnostics only:
  // it holds the node exactly as any other copy does).
  NodeHandle WithOwner(absl::string_view owner) const;
  // The owner label, or empty when this handle has none.
  std::string owner() const;

  // Drops the reference; the handle becomes empty.
  void Reset() {
    Drop();
    heap_ = nullptr;
    count_ = gc::CountRef();
    id_ = NodeId();
    label_ = nullptr;
  }

  friend bool operator==(const NodeHandle& a, const NodeHandle& b) {
    return a.heap_ == b.heap_ && a.id_ == b.id_;
  }
  friend bool operator!=(const NodeHandle& a, const NodeHandle& b) {
    return !(a == b);
  }
  template <typename H>
  friend H AbslHashValue(H h, const NodeHandle& n) {
    return H::combine(std::move(h), n.heap_, n.id_);
  }

 private:
  friend class gc::Heap;
  friend class WeakNodeHandle;
  // Takes over one count already made in `count` (the slot's root count,
  // or `label`'s handle count when `label` is set).
  NodeHandle(gc::Heap* heap, gc::CountRef count, NodeId id,
             gc::SlotLabel* label)
      : heap_(heap), count_(count), id_(id), label_(label) {}
  // Counts this handle, a copy, in count_ (gc::CountUp).
  void CountCopy() const;
  // Uncounts this handle, leaving its fields as they are. A label's count
  // (gc::CountDown, sequentially consistent: the handle's last use happens
  // before whatever that lets another thread do) that reached zero takes
  // the label's entry away (with its root count); a slot's root count
  // (gc::CountDownRoot) that reached zero, or may have, is counted for the
  // collector (Heap::NoteDrop / NoteMaybeDrop).
  void Uncount() const;
  void Drop() {
    if (count_.valid()) Uncount();
  }

  gc::Heap* heap_ = nullptr;
  // Where this handle counts itself: the slot's root count, or its label's
  // SlotLabel::handles. Empty for an empty handle.
  gc::CountRef count_;
  NodeId id_;
  gc::SlotLabel* label_ = nullptr;  // no owner label when null
};

class WeakNodeHandle {
 public:
  WeakNodeHandle() = default;
  explicit WeakNodeHandle(const NodeHandle& strong);

  // A strong handle while the node lives; empty once it has been swept (or
  // its graph destroyed).
  std::optional<NodeHandle> Lock() const;
  // Whether the node has been swept (or this handle is empty).
  bool expired() const { return !Lock().has_value(); }
  NodeId id() const { return id_; }

 private:
  std::weak_ptr<gc::Heap> heap_;
  NodeId id_;
};

}  // namespace graphgc

#endif  // GRAPHGC_GC_HANDLE_H_
