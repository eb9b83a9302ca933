// gc/handle.h
//
// NodeHandle and WeakNodeHandle: the only ways user code holds a node.
//
// A NodeHandle is a strong, copyable reference: while any copy exists the
// node, and everything it reaches through data or control inputs, survives
// collection. Copying and destroying one touches a single atomic counter in
// the node's slot (no lock), so handles are cheap to pass around. A handle
// may carry an owner label ("Sequential 'sequential_3'") that names who
// holds it in ExplainRetention and leak reports; copies keep the label, and
// count themselves in a second atomic, the label's entry for the node (no
// lock either). Only making a labelled handle (WithOwner) and destroying
// the last handle of one label on one node take the heap's label lock, to
// add or remove that entry.
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

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "gc/node_id.h"

namespace graphgc {

class Graph;

namespace gc {
class Heap;
struct Slot;
struct SlotLabel;
}  // namespace gc

class NodeHandle {
 public:
  NodeHandle() = default;
  NodeHandle(const NodeHandle& other);
  NodeHandle(NodeHandle&& other) noexcept
      : heap_(std::exchange(other.heap_, nullptr)),
        slot_(std::exchange(other.slot_, nullptr)),
        id_(std::exchange(other.id_, NodeId())),
        label_(std::exchange(other.label_, nullptr)) {}
  NodeHandle& operator=(const NodeHandle& other);
  NodeHandle& operator=(NodeHandle&& other) noexcept;
  ~NodeHandle() { Release(); }

  // Whether this handle refers to a node (a default handle does not).
  bool valid() const { return slot_ != nullptr; }
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
  void Reset() { Release(); }

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
  NodeHandle(gc::Heap* heap, gc::Slot* slot, NodeId id);
  void Acquire();
  void Release();

  gc::Heap* heap_ = nullptr;
  gc::Slot* slot_ = nullptr;
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
