#include "runtime/graph.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gc/roots.h"
#include "runtime/algorithm.h"
#include "util/status_macros.h"

namespace graphgc {

int64_t Node::ApproxBytes() const {
  int64_t bytes = sizeof(Node) + static_cast<int64_t>(name.capacity());
  for (const auto& [key, value] : attrs) {
    bytes += static_cast<int64_t>(key.size() + sizeof(AttrValue));
    if (const Tensor* t = std::get_if<Tensor>(&value)) bytes += t->TotalBytes();
  }
  if (resource != nullptr) bytes += resource->ApproxBytes();
  return bytes;
}

std::string Output::name() const {
  return absl::StrCat(node_name(), ":", index_);
}

const std::string& Output::node_name() const {
  return handle_.graph()->NodeForRuntime(handle_).name;
}

const std::string& Output::op() const {
  return handle_.graph()->NodeForRuntime(handle_).op;
}

DataType Output::dtype() const {
  const Node& n = handle_.graph()->NodeForRuntime(handle_);
  return index_ >= 0 && index_ < static_cast<int>(n.output_types.size())
             ? n.output_types[index_]
             : DT_INVALID;
}

const TensorShape& Output::shape() const {
  static const TensorShape* const kUnknown = new TensorShape();
  const Node& n = handle_.graph()->NodeForRuntime(handle_);
  return index_ >= 0 && index_ < static_cast<int>(n.output_shapes.size())
             ? n.output_shapes[index_]
             : *kUnknown;
}

namespace {

// Heaps of graphs destroyed while handles were alive, kept (reachable, so
// leak checkers do not count them) for those handles to be dropped safely.
struct OrphanedHeaps {
  Mutex mu;
  std::vector<std::shared_ptr<gc::Heap>> kept ABSL_GUARDED_BY(mu);
};

void KeepOrphanedHeap(std::shared_ptr<gc::Heap> heap) {
  static OrphanedHeaps* const orphaned = new OrphanedHeaps;
  WriterLock l(orphaned->mu);
  orphaned->kept.push_back(std::move(heap));
}

}  // namespace

Graph::Graph()
    : heap_(std::make_shared<gc::Heap>(this)),
      collector_(std::make_shared<gc::Collector>(
          *heap_, static_cast<gc::SweepObserver*>(this))),
      names_(std::make_shared<graph_internal::Names>(heap_)) {}

Graph::~Graph() {
  int64_t held;
  {
    WriterLock l(heap_->mu());
    held = heap_->TotalStrongCount();
    // Handles outlive their graph: free the nodes but keep the slots their
    // counters live in (see the header). A programming error, not a crash.
    if (held > 0) heap_->Orphan();
  }
  if (held > 0) {
    std::fprintf(stderr,
                 "graphgc: Graph destroyed while %lld node handles are alive; "
                 "its nodes are freed and its slot table kept\n",
                 static_cast<long long>(held));
    KeepOrphanedHeap(heap_);
  }
}

Graph& Graph::Default() {
  static Graph* const graph = new Graph();
  return *graph;
}

absl::Status Graph::CheckHandle(const NodeHandle& h,
                                absl::string_view what) const {
  if (!h.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is an empty handle"));
  }
  if (h.graph() != this) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " belongs to another graph"));
  }
  if (!heap_->IsLive(h.id())) {
    return absl::NotFoundError(absl::StrCat(what, " was swept"));
  }
  return absl::OkStatus();
}

absl::StatusOr<NodeHandle> Graph::AddNode(NodeSpec spec) {
  std::string base = spec.name.empty() ? spec.op : spec.name;
  if (spec.op.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", base, "': empty op type"));
  }
  if (absl::Status s = ValidateNodeName(base); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec.op, " node: ", s.message()));
  }
  if (spec.output_shapes.size() != spec.output_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.op, " node '", base, "': ", spec.output_types.size(),
        " output types but ", spec.output_shapes.size(), " output shapes"));
  }
  auto node = std::make_unique<Node>();
  node->op = std::move(spec.op);
  node->op_def = spec.op_def;
  node->attrs = std::move(spec.attrs);
  node->output_types.assign(spec.output_types.begin(), spec.output_types.end());
  node->output_shapes.assign(spec.output_shapes.begin(),
                             spec.output_shapes.end());
  node->resource = std::move(spec.resource);

  WriterLock lock(heap_->mu());
  absl::InlinedVector<uint32_t, 4> edges;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const Output& in = spec.inputs[i];
    GG_RETURN_IF_ERROR(CheckHandle(
        in.handle(), absl::StrCat(node->op, " node '", base, "': input ", i)));
    const Node& producer = NodeAt(in.handle().id().index);
    if (in.index() < 0 ||
        in.index() >= static_cast<int>(producer.output_types.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(node->op, " node '", base, "': input ", i,
                       " reads output ", in.index(), " of '", producer.name,
                       "', which has ", producer.output_types.size()));
    }
    node->inputs.push_back(NodeInput{in.handle().id(), in.index()});
    edges.push_back(in.handle().id().index);
  }
  for (size_t i = 0; i < spec.control_inputs.size(); ++i) {
    GG_RETURN_IF_ERROR(CheckHandle(
        spec.control_inputs[i],
        absl::StrCat(node->op, " node '", base, "': control input ", i)));
    node->control_inputs.push_back(spec.control_inputs[i].id());
    edges.push_back(spec.control_inputs[i].id().index);
  }
  node->name = mutable_names().Unique(base);
  node->base_length = static_cast<uint32_t>(base.size());
  Node* node_ptr = node.get();
  GG_ASSIGN_OR_RETURN(NodeHandle handle,
                      heap_->Allocate(std::move(node), edges));
  mutable_names().Insert(*node_ptr, handle.id().index);
  return handle;
}

absl::Status Graph::AddControlEdge(const NodeHandle& from,
                                   const NodeHandle& to) {
  WriterLock lock(heap_->mu());
  GG_RETURN_IF_ERROR(CheckHandle(from, "control edge source"));
  GG_RETURN_IF_ERROR(CheckHandle(to, "control edge target"));
  Node& node = static_cast<Node&>(*heap_->mutable_object(to.id().index));
  node.control_inputs.push_back(from.id());
  heap_->AddEdge(to.id().index, from.id().index);  // a new structure_version
  return absl::OkStatus();
}

absl::Status Graph::RemoveUnreachableForRollback(absl::Span<const NodeId> ids) {
  WriterLock lock(heap_->mu());
  absl::flat_hash_map<uint32_t, bool> in_set;
  for (NodeId id : ids) {
    if (!heap_->IsLive(id)) {
      return absl::FailedPreconditionError(
          absl::StrCat("RemoveUnreachableForRollback: node in slot ", id.index,
                       " (generation ", id.generation, ") is not live"));
    }
    in_set[id.index] = true;
  }
  for (NodeId id : ids) {
    if (heap_->strong_count(id.index) > 0 || heap_->IsPinned(id.index)) {
      return absl::FailedPreconditionError(
          absl::StrCat("RemoveUnreachableForRollback: '", NodeAt(id.index).name,
                       "' is still held by a handle or a run"));
    }
  }
  const uint32_t n = heap_->num_slots();
  for (uint32_t i = 0; i < n; ++i) {
    if (!heap_->slot(i).live || in_set.contains(i)) continue;
    for (uint32_t in : heap_->edges(i)) {
      if (in_set.contains(in)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "RemoveUnreachableForRollback: '", NodeAt(in).name,
            "' is read by '", NodeAt(i).name, "', which is not removed"));
      }
    }
  }
  // Deduplicated, so a repeated id is freed once.
  std::vector<NodeId> unique;
  unique.reserve(in_set.size());
  for (NodeId id : ids) {
    if (in_set[id.index]) {
      in_set[id.index] = false;
      unique.push_back(id);
    }
  }
  OnSweep(*heap_, unique);
  for (NodeId id : unique) heap_->Free(id.index, /*keep=*/false);
  return absl::OkStatus();
}

void Graph::OnSweep(gc::Heap& heap, absl::Span<const NodeId> garbage) {
  heap.mu().AssertHeld();
  heap_->mu().AssertHeld();  // the same heap: tells the analysis
  std::vector<Node*> nodes;
  nodes.reserve(garbage.size());
  for (NodeId id : garbage) {
    nodes.push_back(static_cast<Node*>(heap.mutable_object(id.index)));
  }
  mutable_names().Erase(nodes);
}

const Node& Graph::NodeAt(uint32_t index) const {
  return static_cast<const Node&>(*heap_->object(index));
}

const Node& Graph::NodeForRuntime(const NodeHandle& node) const {
  return NodeForRuntime(node.id());
}

const Node& Graph::NodeForRuntime(NodeId id) const {
  // No lock: the caller's handle or pin keeps the slot's object in place,
  // and a live node's fields other than control_inputs never change.
  return static_cast<const Node&>(*heap_->HeldSlot(id.index).object);
}

int64_t Graph::num_nodes() const {
  ReaderLock lock(heap_->mu());
  return heap_->live_count();
}

std::optional<NodeHandle> Graph::FindNode(absl::string_view name) const {
  ReaderLock lock(heap_->mu());
  std::optional<uint32_t> slot = names().Find(name);
  if (!slot.has_value()) return std::nullopt;
  return heap_->NewHandle(heap_->IdOf(*slot));
}

bool Graph::AllLive(absl::Span<const NodeId> ids) const {
  ReaderLock lock(heap_->mu());
  for (NodeId id : ids) {
    if (!heap_->IsLive(id)) return false;
  }
  return true;
}

absl::StatusOr<NodeHandle> Graph::HandleFor(NodeId id) const {
  ReaderLock lock(heap_->mu());
  if (!heap_->IsLive(id)) {
    return absl::NotFoundError(absl::StrCat("node in slot ", id.index,
                                            " (generation ", id.generation,
                                            ") was swept"));
  }
  return heap_->NewHandle(id);
}

NodeInfo Graph::DescribeLocked(NodeId id) const {
  const Node& n = NodeAt(id.index);
  NodeInfo info;
  info.handle = heap_->NewHandle(id);
  info.name = n.name;
  info.op = n.op;
  info.op_def = n.op_def;
  for (const NodeInput& in : n.inputs) {
    info.inputs.emplace_back(heap_->NewHandle(in.node), in.index);
  }
  for (NodeId c : n.control_inputs) {
    info.control_inputs.push_back(heap_->NewHandle(c));
  }
  info.attrs = n.attrs;
  info.output_types.assign(n.output_types.begin(), n.output_types.end());
  info.output_shapes.assign(n.output_shapes.begin(), n.output_shapes.end());
  return info;
}

absl::StatusOr<NodeInfo> Graph::Describe(const NodeHandle& node) const {
  ReaderLock lock(heap_->mu());
  GG_RETURN_IF_ERROR(CheckHandle(node, "node"));
  return DescribeLocked(node.id());
}

bool Graph::IsScopeInUse(absl::string_view scope) const {
  ReaderLock lock(heap_->mu());
  return names().IsScopeTaken(scope);
}

std::string Graph::UniqueScope(absl::string_view base) const {
  // Exclusive: looking moves the base's cursor past taken names.
  WriterLock lock(heap_->mu());
  return mutable_names().FirstFreeScope(base);
}

ScopeReservation Graph::ReserveScope(absl::string_view base,
                                     absl::string_view owner) {
  WriterLock lock(heap_->mu());
  return ScopeReservation(names_, mutable_names().ReserveScope(base, owner));
}

std::optional<Graph::ReservedScope> Graph::FindReservedScope(
    absl::string_view node_name) const {
  ReaderLock lock(heap_->mu());
  auto found = names().ReservedScopeOf(node_name);
  if (!found.has_value()) return std::nullopt;
  return ReservedScope{.scope = std::move(found->first),
                       .owner = std::move(found->second)};
}

void ScopeReservation::Release() {
  std::shared_ptr<graph_internal::Names> names = names_.lock();
  names_.reset();
  if (names == nullptr) return;  // never reserved, moved from, or graph gone
  WriterLock lock(names->heap->mu());
  names->index.ReleaseScope(name_);
}

ScopeReservation& ScopeReservation::operator=(
    ScopeReservation&& other) noexcept {
  if (this != &other) {
    Release();
    names_ = std::exchange(other.names_, {});
    name_ = std::move(other.name_);
  }
  return *this;
}

void CollectListenerRegistration::Reset() {
  std::shared_ptr<gc::Collector> collector = collector_.lock();
  collector_.reset();
  if (collector != nullptr) collector->RemoveListener(id_);
  id_ = 0;
}

CollectListenerRegistration& CollectListenerRegistration::operator=(
    CollectListenerRegistration&& other) noexcept {
  if (this != &other) {
    Reset();
    collector_ = std::exchange(other.collector_, {});
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

absl::StatusOr<std::vector<NodeHandle>> Graph::ReachableFrom(
    absl::Span<const NodeHandle> roots) const {
  ReaderLock lock(heap_->mu());
  for (size_t i = 0; i < roots.size(); ++i) {
    GG_RETURN_IF_ERROR(CheckHandle(roots[i], absl::StrCat("root ", i)));
  }
  // A node is emitted after all its inputs (post-order), which is a
  // topological order of the acyclic part; a back edge (a cycle through a
  // control edge) is ignored.
  struct Walk {
    const gc::Heap& heap;
    absl::flat_hash_map<uint32_t, DfsMark> marks;
    std::vector<NodeHandle> order;
    size_t NumSuccessors(uint32_t index) const {
      heap.mu().AssertReaderHeld();
      return heap.edges(index).size();
    }
    std::optional<uint32_t> Successor(uint32_t index, size_t i) const {
      heap.mu().AssertReaderHeld();
      return heap.edges(index)[i];
    }
    DfsMark Discover(uint32_t& index) {
      auto [it, inserted] = marks.try_emplace(index, DfsMark::kOpen);
      return inserted ? DfsMark::kNew : it->second;
    }
    absl::Status BackEdge(uint32_t, uint32_t,
                          absl::Span<const DfsFrame<uint32_t>>) {
      return absl::OkStatus();
    }
    absl::Status Finish(uint32_t index) {
      heap.mu().AssertReaderHeld();
      marks[index] = DfsMark::kDone;
      order.push_back(heap.NewHandle(heap.IdOf(index)));
      return absl::OkStatus();
    }
  };
  Walk walk{*heap_, {}, {}};
  PostOrderDfs<uint32_t, Walk> dfs(walk);
  for (const NodeHandle& root : roots) {
    GG_RETURN_IF_ERROR(dfs.Visit(root.id().index));
  }
  return std::move(walk.order);
}

CollectStats Graph::Collect() { return collector_->Collect(); }

CollectStats Graph::CollectYoung() { return collector_->CollectYoung(); }

std::optional<CollectStats> Graph::MaybeCollect() {
  return collector_->MaybeCollect();
}

GcStats Graph::gc_stats() const { return collector_->stats(); }
GcPolicy Graph::gc_policy() const { return collector_->policy(); }
void Graph::set_gc_policy(const GcPolicy& policy) {
  collector_->set_policy(policy);
}

int Graph::AddCollectListener(
    std::function<void(const CollectEvent&)> listener) {
  return collector_->AddListener(std::move(listener));
}

void Graph::RemoveCollectListener(int id) { collector_->RemoveListener(id); }

CollectListenerRegistration Graph::RegistrationFor(int listener_id) {
  return CollectListenerRegistration(collector_, listener_id);
}

absl::StatusOr<std::vector<std::string>> Graph::ExplainRetention(
    absl::string_view node_name) const {
  ReaderLock lock(heap_->mu());
  std::optional<uint32_t> slot = names().Find(node_name);
  if (!slot.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("ExplainRetention: no live node named '", node_name, "'"));
  }
  std::optional<gc::RetentionPath> path = gc::FindRetentionPath(*heap_, *slot);
  if (!path.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ExplainRetention: '", node_name,
        "' is not reachable from any root; the next collection sweeps it"));
  }
  std::vector<std::string> holders;
  for (const auto& [label, count] : path->holders) {
    holders.push_back(count > 1 ? absl::StrCat(label, " (", count, " handles)")
                                : label);
  }
  std::vector<std::string> out;
  out.push_back(absl::StrJoin(holders, ", "));
  for (uint32_t index : path->chain) out.push_back(NodeAt(index).name);
  return out;
}

std::vector<OwnerUsage> Graph::LeakReport() const {
  ReaderLock lock(heap_->mu());
  std::vector<uint32_t> roots;
  gc::CollectRoots(*heap_, roots);
  // Group roots by their first holder label, labels in sorted order, then
  // give each live node to the first group that reaches it.
  absl::btree_map<std::string, std::vector<uint32_t>> by_owner;
  for (uint32_t r : roots) {
    auto labels = heap_->RootLabels(r);
    by_owner[labels.empty() ? std::string(gc::kUnlabelledRoot)
                            : labels.front().first]
        .push_back(r);
  }
  std::vector<bool> seen(heap_->num_slots(), false);
  std::vector<OwnerUsage> report;
  std::vector<uint32_t> stack;
  for (const auto& [owner, owner_roots] : by_owner) {
    OwnerUsage usage{.owner = owner};
    stack.assign(owner_roots.begin(), owner_roots.end());
    while (!stack.empty()) {
      uint32_t n = stack.back();
      stack.pop_back();
      if (seen[n]) continue;
      seen[n] = true;
      ++usage.nodes;
      usage.bytes += NodeAt(n).ApproxBytes();
      for (uint32_t in : heap_->edges(n)) {
        if (!seen[in]) stack.push_back(in);
      }
    }
    if (usage.nodes > 0) report.push_back(std::move(usage));
  }
  int64_t garbage = heap_->live_count();
  for (const OwnerUsage& u : report) garbage -= u.nodes;
  if (garbage > 0) {
    report.push_back(OwnerUsage{.owner = "(unreachable, awaiting collection)",
                                .nodes = garbage});
  }
  std::stable_sort(report.begin(), report.end(),
                   [](const OwnerUsage& a, const OwnerUsage& b) {
                     return a.nodes > b.nodes;
                   });
  return report;
}

std::vector<std::string> Graph::SavedGarbage() const {
  std::vector<std::string> out;
  collector_->ForEachSaved([&](const gc::Object& o) {
    const Node& n = static_cast<const Node&>(o);
    out.push_back(absl::StrCat(n.name, " (", n.op, ")"));
  });
  return out;
}

void Graph::ClearSavedGarbage() { collector_->ClearSaved(); }

absl::StatusOr<gc::PinScope> Graph::Pin(absl::Span<const NodeId> ids) const {
  ReaderLock lock(heap_->mu());
  for (NodeId id : ids) {
    if (!heap_->IsLive(id)) {
      return absl::NotFoundError(absl::StrCat("node in slot ", id.index,
                                              " (generation ", id.generation,
                                              ") was swept"));
    }
  }
  return gc::PinIds(*heap_, ids);
}

size_t Graph::NameTableSizeForTesting() const {
  ReaderLock lock(heap_->mu());
  return names().size() + heap_->label_table_size();
}

}  // namespace graphgc
