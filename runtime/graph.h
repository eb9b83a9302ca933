// runtime/graph.h
//
// Graph and Output: a dataflow graph whose nodes live only while something
// reaches them.
//
// A Graph is a set of nodes, each with an op type, a unique name (TensorFlow
// style: scopes with '/', uniquing with _1, _2, ...), data inputs (a node
// and an output index), control inputs and attributes. Nodes are held in
// the collector's slots (gc/heap.h) and are owned by nothing but
// reachability: a node survives a collection while a NodeHandle (or an
// Output, which holds one), an in-flight run's pin, or a surviving node
// that consumes it reaches it. Everything else is swept, with its name,
// attributes, tensors and index entries.
//
// Graph::Default() is the one process-wide graph (never destroyed); graphs
// can also be made explicitly. What a graph hands out may outlive it, but
// only to be destroyed (or reset, moved, copied): once the graph is gone,
// destroying a NodeHandle, Output, WeakNodeHandle, ScopeReservation,
// CollectListenerRegistration, Session, or a model or layer built in it is
// harmless; NodeHandle::graph() then returns nullptr and
// WeakNodeHandle::Lock() an empty optional; anything else (Describe, ops on
// its Outputs, Output::name(), Session::Run, Fit, ...) is undefined. A graph
// destroyed while strong handles are alive frees its nodes but keeps its
// slot table (a few hundred KB at most per 4,096 nodes it ever held) for the
// rest of the process, so those handles stay safe to drop, and says so on
// stderr: a programming error, but not a crash.
//
// Thread safety: every method may be called from any thread. One mutex
// (heap().mu()) guards the nodes and the name index; node creation and
// collection take it exclusively, lookups shared. Handles are copied and
// dropped without it.
#ifndef GRAPHGC_RUNTIME_GRAPH_H_
#define GRAPHGC_RUNTIME_GRAPH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gc/collector.h"
#include "gc/handle.h"
#include "gc/heap.h"
#include "gc/pin.h"
#include "gc/roots.h"
#include "gc/stats.h"
#include "runtime/attr_value.h"
#include "runtime/name_index.h"
#include "runtime/node_resource.h"
#include "runtime/node_traits.h"
#include "runtime/tensor.h"
#include "util/registration.h"

namespace graphgc {

class Graph;
class NodeView;            // runtime/node_view.h
struct Node;               // runtime/node.h, internal to runtime/
struct OpDef;              // runtime/op_def.h
struct GradientWalkNodes;  // runtime/gradient_walk.cc
namespace exec {
struct PlanBuilderNodes;  // runtime/plan_builder.cc
}  // namespace exec

// Output: one output of a node, as a strong handle plus an output index.
class Output {
 public:
  Output() = default;
  Output(NodeHandle handle, int index)
      : handle_(std::move(handle)), index_(index) {}

  const NodeHandle& handle() const { return handle_; }
  int index() const { return index_; }
  bool valid() const { return handle_.valid(); }
  Graph* graph() const { return handle_.graph(); }

  // "node_name:index".
  std::string name() const;
  const std::string& node_name() const;
  const std::string& op() const;
  DataType dtype() const;
  // The static shape; dimensions may be -1 (unknown until run time).
  const TensorShape& shape() const;

  friend bool operator==(const Output& a, const Output& b) {
    return a.index_ == b.index_ && a.handle_ == b.handle_;
  }
  friend bool operator!=(const Output& a, const Output& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const Output& o) {
    return H::combine(std::move(h), o.handle_, o.index_);
  }

 private:
  NodeHandle handle_;
  int index_ = 0;
};

// What Graph::AddNode builds. Inputs and control inputs must be valid
// handles of the same graph. `name` is the requested name (a scope path is
// fine, "dense_1/MatMul"); when it is taken, "_1", "_2", ... is appended.
// An empty name means the op type.
struct NodeSpec {
  std::string op;
  const OpDef* op_def = nullptr;
  std::string name;
  std::vector<Output> inputs;
  std::vector<NodeHandle> control_inputs;
  AttrMap attrs;
  std::vector<DataType> output_types;
  std::vector<TensorShape> output_shapes;
  std::shared_ptr<NodeResource> resource;
};

// A node of the same Graph::AddNodes batch, by its position in the batch;
// it must come before the node that refers to it.
struct BatchNode {
  size_t position = 0;
};

// Output `index` of a node of the same Graph::AddNodes batch.
struct BatchOutput {
  size_t position = 0;
  int index = 0;
};

// One node of a Graph::AddNodes batch: a NodeSpec whose inputs may also be
// earlier nodes of the batch, and whose name is taken exactly as given
// (never uniqued; empty means the op type).
struct BatchNodeSpec {
  std::string op;
  const OpDef* op_def = nullptr;
  std::string name;
  std::vector<std::variant<Output, BatchOutput>> inputs;
  std::vector<std::variant<NodeHandle, BatchNode>> control_inputs;
  AttrMap attrs;
  std::vector<DataType> output_types;
  std::vector<TensorShape> output_shapes;
  std::shared_ptr<NodeResource> resource;
};

// A copy of one node's description, for code outside the runtime's core
// (export, gradients, tests). Holding it keeps the node's inputs alive.
struct NodeInfo {
  NodeHandle handle;
  std::string name;
  std::string op;
  const OpDef* op_def = nullptr;
  std::vector<Output> inputs;
  std::vector<NodeHandle> control_inputs;
  AttrMap attrs;
  std::vector<DataType> output_types;
  std::vector<TensorShape> output_shapes;
};

// One line of a leak report: live nodes grouped by who holds them (see
// gc::UsageByOwner, which computes it).
using OwnerUsage = gc::OwnerUsage;

namespace graph_internal {

// A graph's name table and the heap whose mutex guards it. The graph shares
// it with its scope reservations only, so a reservation released after the
// graph is gone finds it expired, and one released while ~Graph runs keeps
// it alive for the length of the release.
struct Names {
  explicit Names(std::shared_ptr<gc::Heap> h) : heap(std::move(h)) {}
  const std::shared_ptr<gc::Heap> heap;
  NameIndex index ABSL_GUARDED_BY(heap->mu());
};

// Frees reserved scope `name` (ScopeReservation's release).
void ReleaseScope(Names& names, const std::string& name);

}  // namespace graph_internal

// ScopeReservation: a top-level name scope held for its owner (a layer or a
// model) while the owner lives, so no other owner gets the same name even
// before any node exists in the scope. Move-only; releases on destruction
// (a Registration, util/registration.h).
// May outlive its graph: releasing it then does nothing (the graph's names
// went with the graph).
class ScopeReservation {
 public:
  ScopeReservation() = default;

  const std::string& name() const { return hold_.key(); }

 private:
  friend class Graph;
  ScopeReservation(std::weak_ptr<graph_internal::Names> names, std::string name)
      : hold_(std::move(names), std::move(name)) {}

  Registration<graph_internal::Names, std::string,
               &graph_internal::ReleaseScope>
      hold_;
};

// The registration gc::Collector::Listen returns, by its older name.
using CollectListenerRegistration = gc::ListenerRegistration;

// RuntimeNodeAccess: the one way to the Node a live handle or pin keeps
// (Graph::NodeForRuntime is private; this class is its friend). An
// attorney, not more friends of Graph: NodeOf is private too, and its
// friends, the runtime's own readers of nodes, may call it and nothing
// else of the graph. They are Output and NodeView, and the plan builder's
// and the gradient walk's passes through a struct defined in their .cc
// file alone, so no header hands the key on; code anywhere else that
// calls NodeOf does not compile. (A friend's name defined again elsewhere
// would be an ODR violation no compiler sees; the lint check
// //tests/lint:node_boundary_check rejects these names outside runtime/.)
class RuntimeNodeAccess {
 private:
  friend class Output;
  friend class NodeView;
  friend struct exec::PlanBuilderNodes;
  friend struct GradientWalkNodes;

  // The node `id` names, valid while the caller's handle or pin holds it.
  static const Node& NodeOf(const Graph& graph, NodeId id);
};

class Graph : private gc::SweepObserver {
 public:
  Graph();
  ~Graph() override;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // The process-wide graph every model uses unless told otherwise.
  static Graph& Default();

  // --- building ---

  // Validates `spec` (handles of this graph, alive; a valid name) and adds
  // the node. On error nothing changes. The rvalue form moves the name
  // into the node; the const form copies the name and reads the rest, so
  // a caller adding many similar nodes can reuse one spec, changing its
  // name and inputs between calls (attributes equal to a live node's are
  // shared, not copied: runtime/node_traits.h).
  absl::StatusOr<NodeHandle> AddNode(NodeSpec&& spec);
  absl::StatusOr<NodeHandle> AddNode(const NodeSpec& spec);
  // Makes `to` wait for `from` (a control input). May create cycles; the
  // collector handles them.
  absl::Status AddControlEdge(const NodeHandle& from, const NodeHandle& to);

  // Adds every node of `batch` or none (a GraphDef import commits this
  // way). Everything is checked first: each spec as AddNode checks it,
  // batch references to earlier positions only, names valid, distinct
  // within the batch (InvalidArgument) and held by no live node
  // (AlreadyExists), room in the graph (ResourceExhausted); then all nodes
  // are added under one hold of the graph's lock, so no other thread sees
  // part of the batch. On error the graph is unchanged. Returns a strong
  // handle to each node, in batch order. Like AddNode, not a safe point:
  // it never collects. Reserved scopes (ReserveScope) are not checked:
  // callers that must stay out of them check FindReservedScope first.
  absl::StatusOr<std::vector<NodeHandle>> AddNodes(
      std::vector<BatchNodeSpec> batch);

  // --- looking ---

  int64_t num_nodes() const;
  std::optional<NodeHandle> FindNode(absl::string_view name) const;
  absl::StatusOr<NodeInfo> Describe(const NodeHandle& node) const;
  // Whether `scope` is reserved (ReserveScope), or any live node is named
  // `scope` or starts with "scope/".
  bool IsScopeInUse(absl::string_view scope) const;
  // `base` if it is not in use (above), else base_1, base_2, ... (the first
  // free one). Keras-style layer and model names come from here. O(1)
  // amortised for a top-level base however many of its scopes live (see
  // runtime/name_index.h); a nested base ("outer/dense") is probed suffix
  // by suffix.
  std::string UniqueScope(absl::string_view base) const;
  // Like UniqueScope, and holds the name (also against other reservations)
  // until the reservation is destroyed. The rule for reuse: a name is free
  // again once its owner dropped the reservation and every node in its
  // scope has been swept; the smallest free suffix is handed out first.
  // `owner` labels the holder in errors about the scope (e.g. an import
  // refused because it would place nodes in it), "Layer 'dense'".
  ScopeReservation ReserveScope(absl::string_view base,
                                absl::string_view owner = "");
  // If a node named `node_name` would be inside a reserved scope (the name
  // is the scope or starts with "scope/"), that scope and its owner label
  // (empty when the reservation gave none).
  struct ReservedScope {
    std::string scope;
    std::string owner;
  };
  std::optional<ReservedScope> FindReservedScope(
      absl::string_view node_name) const;
  // Every node `roots` reach through data and control inputs, inputs before
  // the nodes that read them, in an order fixed by the graph's structure
  // (not by slot numbers), so identical graphs give identical orders.
  absl::StatusOr<std::vector<NodeHandle>> ReachableFrom(
      absl::Span<const NodeHandle> roots) const;

  // --- collecting ---
  //
  // The graph's collector (gc/collector.h) collects. The graph keeps the
  // public contract's entry points and what needs node names; the rest is
  // the collector's: graph.collector().MaybeCollect() at safe points (the
  // runtime calls it before each training step and each export),
  // CollectYoung(), policy(), Listen(), ClearSaved().

  // The graph's collector, for as long as the graph lives.
  gc::Collector& collector() const { return *collector_; }
  // A full collection (gc::Collector::Collect).
  CollectStats Collect();
  GcStats gc_stats() const;
  void set_gc_policy(const GcPolicy& policy);
  // Who keeps `node_name` alive: the holding root's owner labels, then the
  // chain of node names from that root down to the node.
  absl::StatusOr<std::vector<std::string>> ExplainRetention(
      absl::string_view node_name) const;
  // Live nodes grouped by the owner label of the root that first reaches
  // them (roots visited in label order), largest first.
  std::vector<OwnerUsage> LeakReport() const;
  // With GcPolicy::save_garbage: "name (op)" of every node set aside
  // (collector().ClearSaved() destroys them).
  std::vector<std::string> SavedGarbage() const;

  // --- for the runtime's own code ---

  // A strong handle to a live node (NotFound once it is swept).
  absl::StatusOr<NodeHandle> HandleFor(NodeId id) const;
  gc::Heap& heap() const { return *heap_; }

  // --- for tests ---
  //
  // The runtime itself pins and checks liveness through exec::PinnedRun
  // (runtime/plan.h), under the lock it checks its plan with.

  // Pins live nodes (roots until the scope ends); NotFound, pinning
  // nothing, if any id is dead.
  absl::StatusOr<gc::PinScope> PinForTesting(
      absl::Span<const NodeId> ids) const;
  // Whether every id still names a live node (a swept slot's generation
  // changes, so a reused slot does not count). One shared lock.
  bool AllLiveForTesting(absl::Span<const NodeId> ids) const;
  // Sizes of the name tables, for tests that bookkeeping stays bounded.
  size_t NameTableSizeForTesting() const;
  // Records in the node traits table (runtime/node_traits.h), for the same.
  size_t NodeTraitsTableSizeForTesting() const;

 private:
  friend class RuntimeNodeAccess;

  // Both AddNode forms: Spec is NodeSpec (moved from) or const NodeSpec&.
  template <typename Spec>
  absl::StatusOr<NodeHandle> AddNodeFrom(Spec&& spec);
  // The node a live handle (or pin) keeps; valid while that holds. The
  // runtime's passes reach it through RuntimeNodeAccess; ops/, serialize/
  // and the rest read nodes through NodeView (runtime/node_view.h).
  const Node& NodeForRuntime(NodeId id) const;
  void OnSweep(gc::Heap& heap, absl::Span<const NodeId> garbage) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu());
  Mutex& heap_mu() const ABSL_LOCK_RETURNED(heap_->mu()) { return heap_->mu(); }
  // The name index. names_->heap is heap_ (the constructor sets both), so
  // heap_mu() is the index's lock; the analysis cannot tell that the two
  // pointers are one, and the assertion tells it (and checks it in debug
  // builds).
  const NameIndex& names() const ABSL_SHARED_LOCKS_REQUIRED(heap_mu()) {
    names_->heap->mu().AssertReaderHeld();
    return names_->index;
  }
  NameIndex& mutable_names() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap_mu()) {
    names_->heap->mu().AssertHeld();
    return names_->index;
  }
  absl::Status CheckHandle(const NodeHandle& h, absl::string_view what) const
      ABSL_SHARED_LOCKS_REQUIRED(heap_mu());
  const Node& NodeAt(uint32_t index) const
      ABSL_SHARED_LOCKS_REQUIRED(heap_mu());
  NodeInfo DescribeLocked(NodeId id) const
      ABSL_SHARED_LOCKS_REQUIRED(heap_mu());
  // AddNodes' checks that need the lock (inputs from the graph, names
  // free, room), then the commit; `batch` passed the checks without it.
  absl::Status CheckBatchLocked(absl::Span<const BatchNodeSpec> batch) const
      ABSL_SHARED_LOCKS_REQUIRED(heap_mu());
  std::vector<NodeHandle> CommitBatchLocked(std::vector<BatchNodeSpec> batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap_mu());

  std::shared_ptr<gc::Heap> heap_;
  const std::unique_ptr<gc::Collector> collector_;
  // The nodes' op types, attributes and outputs, each distinct set once
  // (runtime/node_traits.h).
  NodeTraitsTable traits_ ABSL_GUARDED_BY(heap_->mu());

  // Names and reserved scopes; shared (weakly) with scope reservations.
  const std::shared_ptr<graph_internal::Names> names_;
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_GRAPH_H_
