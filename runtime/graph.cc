#include "runtime/graph.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "gc/roots.h"
#include "runtime/algorithm.h"
#include "runtime/node.h"
#include "util/status_macros.h"

namespace graphgc {

std::string Output::name() const {
  return absl::StrCat(node_name(), ":", index_);
}

const std::string& Output::node_name() const {
  return RuntimeNodeAccess::NodeOf(*handle_.graph(), handle_.id()).name;
}

const std::string& Output::op() const {
  return RuntimeNodeAccess::NodeOf(*handle_.graph(), handle_.id()).op();
}

DataType Output::dtype() const {
  const Node& n = RuntimeNodeAccess::NodeOf(*handle_.graph(), handle_.id());
  return index_ >= 0 && index_ < static_cast<int>(n.output_types().size())
             ? n.output_types()[index_]
             : DT_INVALID;
}

const TensorShape& Output::shape() const {
  static const TensorShape* const kUnknown = new TensorShape();
  const Node& n = RuntimeNodeAccess::NodeOf(*handle_.graph(), handle_.id());
  return index_ >= 0 && index_ < static_cast<int>(n.output_shapes().size())
             ? n.output_shapes()[index_]
             : *kUnknown;
}

namespace {

// Heaps of graphs destroyed while handles were alive, kept (reachable, so
// leak checkers do not count them) for those handles to be dropped safely.
struct OrphanedHeaps {
  Mutex mu;
  std::vector<std::shared_ptr<gc::Heap>> kept ABSL_GUARDED_BY(mu);
};

// Whether `h` is a live handle of `graph`, whose heap is `heap`: what
// Graph::CheckHandle accepts, without building the message it refuses with.
bool IsUsable(const gc::Heap& heap, const Graph* graph, const NodeHandle& h)
    ABSL_SHARED_LOCKS_REQUIRED(heap.mu()) {
  return h.valid() && h.graph() == graph && heap.IsLive(h.id());
}

void KeepOrphanedHeap(std::shared_ptr<gc::Heap> heap) {
  static OrphanedHeaps* const orphaned = new OrphanedHeaps;
  WriterLock l(orphaned->mu);
  orphaned->kept.push_back(std::move(heap));
}

}  // namespace

Graph::Graph()
    : heap_(std::make_shared<gc::Heap>(this)),
      collector_(std::make_unique<gc::Collector>(
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

absl::StatusOr<NodeHandle> Graph::AddNode(NodeSpec&& spec) {
  return AddNodeFrom(std::move(spec));
}

absl::StatusOr<NodeHandle> Graph::AddNode(const NodeSpec& spec) {
  return AddNodeFrom(spec);
}

template <typename Spec>
absl::StatusOr<NodeHandle> Graph::AddNodeFrom(Spec&& spec) {
  constexpr bool kMovable = !std::is_lvalue_reference_v<Spec>;
  // The requested name: the op type when none was given.
  const absl::string_view base =
      spec.name.empty() ? absl::string_view(spec.op) : spec.name;
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
  auto node = std::make_unique<Node>(NodeKey());
  node->op_def = spec.op_def;
  if constexpr (kMovable) {
    node->resource = std::move(spec.resource);
  } else {
    node->resource = spec.resource;
  }

  // Swept nodes this allocation destroys (lazy sweeping, gc/collector.h),
  // after the lock below is released: declared first, destroyed last.
  std::unique_ptr<gc::Object> reclaimed[gc::Collector::kReclaimPerNode];
  WriterLock lock(heap_->mu());
  absl::InlinedVector<uint32_t, 4> edges;
  // Each handle is checked inline; the message naming it is built only
  // when it is refused.
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const Output& in = spec.inputs[i];
    if (!IsUsable(*heap_, this, in.handle())) {
      return CheckHandle(
          in.handle(), absl::StrCat(spec.op, " node '", base, "': input ", i));
    }
    const Node& producer = NodeAt(in.handle().id().index);
    if (in.index() < 0 ||
        in.index() >= static_cast<int>(producer.output_types().size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(spec.op, " node '", base, "': input ", i,
                       " reads output ", in.index(), " of '", producer.name,
                       "', which has ", producer.output_types().size()));
    }
    node->inputs.push_back(NodeInput{in.handle().id(), in.index()});
    edges.push_back(in.handle().id().index);
  }
  for (size_t i = 0; i < spec.control_inputs.size(); ++i) {
    const NodeHandle& control = spec.control_inputs[i];
    if (!IsUsable(*heap_, this, control)) {
      return CheckHandle(control, absl::StrCat(spec.op, " node '", base,
                                               "': control input ", i));
    }
    node->control_inputs.push_back(control.id());
    edges.push_back(control.id().index);
  }
  node->base_length = static_cast<uint32_t>(base.size());
  // A free name is the requested one (moved when it may be); a taken one
  // is uniqued. Before the traits: `base` may view spec.op, moved below.
  // Looked up once: an untaken name goes in where the lookup found its
  // place (nothing changes the index before the Insert below).
  const NameIndex::Lookup looked = mutable_names().Look(base);
  if (looked.taken()) {
    node->name = mutable_names().Unique(base);
  } else if (kMovable && !spec.name.empty()) {
    node->name = std::move(spec.name);
  } else {
    node->name.assign(base.data(), base.size());
  }
  if constexpr (kMovable) {
    node->traits = traits_.Intern(std::move(spec.op), std::move(spec.attrs),
                                  spec.output_types, spec.output_shapes);
  } else {
    node->traits = traits_.InternCopy(spec.op, spec.attrs, spec.output_types,
                                      spec.output_shapes);
  }
  Node* node_ptr = node.get();
  GG_ASSIGN_OR_RETURN(NodeHandle handle,
                      heap_->Allocate(std::move(node), edges));
  if (looked.taken()) {
    mutable_names().Insert(*node_ptr, handle.id().index);
  } else {
    mutable_names().Insert(*node_ptr, handle.id().index, looked);
  }
  heap_->TakeUnreclaimed(absl::MakeSpan(reclaimed));
  return handle;
}

absl::Status Graph::AddControlEdge(const NodeHandle& from,
                                   const NodeHandle& to) {
  WriterLock lock(heap_->mu());
  GG_RETURN_IF_ERROR(CheckHandle(from, "control edge source"));
  GG_RETURN_IF_ERROR(CheckHandle(to, "control edge target"));
  if (heap_->edges(to.id().index).size() >= gc::EdgeList::kMaxSize) {
    return absl::ResourceExhaustedError(
        absl::StrCat("control edge target already has ", gc::EdgeList::kMaxSize,
                     " inputs, the most a node has"));
  }
  Node& node = static_cast<Node&>(*heap_->mutable_object(to.id().index));
  node.control_inputs.push_back(from.id());
  heap_->AddEdge(to.id().index, from.id().index);  // a new structure_version
  return absl::OkStatus();
}

namespace {

// How AddNodes' errors name node `i` of a batch.
std::string BatchLabel(const BatchNodeSpec& spec, size_t i) {
  return absl::StrCat(spec.op, " node '", spec.name, "' (batch position ", i,
                      ")");
}

// AddNodes' checks that need no lock: each spec on its own, references to
// earlier positions only, names distinct within the batch. Empty names
// become the op type first.
absl::Status CheckBatchAlone(std::vector<BatchNodeSpec>& batch) {
  absl::flat_hash_map<absl::string_view, size_t> positions;
  for (size_t i = 0; i < batch.size(); ++i) {
    BatchNodeSpec& spec = batch[i];
    if (spec.name.empty()) spec.name = spec.op;
    if (spec.op.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", spec.name, "' (batch position ", i, "): empty op type"));
    }
    if (absl::Status s = ValidateNodeName(spec.name); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(BatchLabel(spec, i), ": ", s.message()));
    }
    if (spec.output_shapes.size() != spec.output_types.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          BatchLabel(spec, i), ": ", spec.output_types.size(),
          " output types but ", spec.output_shapes.size(), " output shapes"));
    }
    auto [it, inserted] = positions.emplace(spec.name, i);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat(BatchLabel(spec, i), ": name also given to position ",
                       it->second, " of the batch"));
    }
    auto check_position = [&](size_t position, absl::string_view what) {
      if (position >= i) {
        return absl::InvalidArgumentError(absl::StrCat(
            BatchLabel(spec, i), ": ", what, " reads batch position ", position,
            ", which does not come before it"));
      }
      return absl::OkStatus();
    };
    for (size_t k = 0; k < spec.inputs.size(); ++k) {
      const auto* in = std::get_if<BatchOutput>(&spec.inputs[k]);
      if (in == nullptr) continue;
      GG_RETURN_IF_ERROR(
          check_position(in->position, absl::StrCat("input ", k)));
      const BatchNodeSpec& producer = batch[in->position];
      if (in->index < 0 ||
          in->index >= static_cast<int>(producer.output_types.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat(BatchLabel(spec, i), ": input ", k, " reads output ",
                         in->index, " of '", producer.name, "', which has ",
                         producer.output_types.size()));
      }
    }
    for (size_t k = 0; k < spec.control_inputs.size(); ++k) {
      const auto* c = std::get_if<BatchNode>(&spec.control_inputs[k]);
      if (c == nullptr) continue;
      GG_RETURN_IF_ERROR(
          check_position(c->position, absl::StrCat("control input ", k)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<NodeHandle>> Graph::AddNodes(
    std::vector<BatchNodeSpec> batch) {
  GG_RETURN_IF_ERROR(CheckBatchAlone(batch));
  // As AddNode: destroyed after the lock is released.
  std::vector<std::unique_ptr<gc::Object>> reclaimed;
  WriterLock lock(heap_->mu());
  GG_RETURN_IF_ERROR(CheckBatchLocked(batch));
  const size_t nodes = batch.size();
  std::vector<NodeHandle> handles = CommitBatchLocked(std::move(batch));
  reclaimed.resize(std::min(gc::Collector::kReclaimPerNode * nodes,
                            heap_->unreclaimed_count()));
  heap_->TakeUnreclaimed(absl::MakeSpan(reclaimed));
  return handles;
}

absl::Status Graph::CheckBatchLocked(
    absl::Span<const BatchNodeSpec> batch) const {
  heap_mu().AssertReaderHeld();
  const size_t room =
      heap_->free_list_size() + (gc::Heap::kMaxSlots - heap_->num_slots());
  if (batch.size() > room) {
    return absl::ResourceExhaustedError(
        absl::StrCat("AddNodes: ", batch.size(), " nodes do not fit: room for ",
                     room, " more (at most ", gc::Heap::kMaxSlots, " live)"));
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchNodeSpec& spec = batch[i];
    for (size_t k = 0; k < spec.inputs.size(); ++k) {
      const auto* in = std::get_if<Output>(&spec.inputs[k]);
      if (in == nullptr) continue;
      GG_RETURN_IF_ERROR(CheckHandle(
          in->handle(), absl::StrCat(BatchLabel(spec, i), ": input ", k)));
      const Node& producer = NodeAt(in->handle().id().index);
      if (in->index() < 0 ||
          in->index() >= static_cast<int>(producer.output_types().size())) {
        return absl::InvalidArgumentError(
            absl::StrCat(BatchLabel(spec, i), ": input ", k, " reads output ",
                         in->index(), " of '", producer.name, "', which has ",
                         producer.output_types().size()));
      }
    }
    for (size_t k = 0; k < spec.control_inputs.size(); ++k) {
      const auto* c = std::get_if<NodeHandle>(&spec.control_inputs[k]);
      if (c == nullptr) continue;
      GG_RETURN_IF_ERROR(CheckHandle(
          *c, absl::StrCat(BatchLabel(spec, i), ": control input ", k)));
    }
    if (names().Find(spec.name).has_value()) {
      return absl::AlreadyExistsError(absl::StrCat(
          BatchLabel(spec, i), ": the graph already has a node named '",
          spec.name, "'"));
    }
  }
  return absl::OkStatus();
}

std::vector<NodeHandle> Graph::CommitBatchLocked(
    std::vector<BatchNodeSpec> batch) {
  heap_mu().AssertHeld();
  std::vector<NodeHandle> handles;
  handles.reserve(batch.size());
  for (BatchNodeSpec& spec : batch) {
    auto node = std::make_unique<Node>(NodeKey());
    absl::InlinedVector<uint32_t, 4> edges;
    for (const std::variant<Output, BatchOutput>& in : spec.inputs) {
      NodeInput input;
      if (const auto* out = std::get_if<Output>(&in)) {
        input = NodeInput{out->handle().id(), out->index()};
      } else {
        const BatchOutput& b = std::get<BatchOutput>(in);
        input = NodeInput{handles[b.position].id(), b.index};
      }
      node->inputs.push_back(input);
      edges.push_back(input.node.index);
    }
    for (const std::variant<NodeHandle, BatchNode>& c : spec.control_inputs) {
      const NodeId id = std::holds_alternative<NodeHandle>(c)
                            ? std::get<NodeHandle>(c).id()
                            : handles[std::get<BatchNode>(c).position].id();
      node->control_inputs.push_back(id);
      edges.push_back(id.index);
    }
    node->op_def = spec.op_def;
    node->name = std::move(spec.name);
    node->base_length = static_cast<uint32_t>(node->name.size());
    node->traits = traits_.Intern(std::move(spec.op), std::move(spec.attrs),
                                  spec.output_types, spec.output_shapes);
    node->resource = std::move(spec.resource);
    Node* node_ptr = node.get();
    // Cannot fail: CheckBatchLocked made sure there is room.
    absl::StatusOr<NodeHandle> handle = heap_->Allocate(std::move(node), edges);
    assert(handle.ok());
    mutable_names().Insert(*node_ptr, handle->id().index);
    handles.push_back(*std::move(handle));
  }
  return handles;
}

void Graph::OnSweep(gc::Heap& heap, absl::Span<const NodeId> garbage) {
  heap.mu().AssertHeld();
  heap_->mu().AssertHeld();  // the same heap: tells the analysis
  // The index reads each node in place: a (node, slot) list built here
  // would be fresh pages for a big sweep (16 bytes per swept node), and
  // their first-touch faults a large share of the pause.
  // A dropped scope's name tables wait in the heap beside its nodes and
  // are destroyed as allocation reaches them (gc/heap.h invariant 5), not
  // inside the pause.
  mutable_names().Erase(
      garbage,
      [&heap](uint32_t slot) -> Node& {
        heap.mu().AssertHeld();  // OnSweep's caller holds it
        return static_cast<Node&>(*heap.mutable_object(slot));
      },
      [&heap](std::unique_ptr<gc::Object> group) {
        heap.mu().AssertHeld();
        heap.DeferDestruction(std::move(group));
      });
}

const Node& Graph::NodeAt(uint32_t index) const {
  return static_cast<const Node&>(*heap_->object(index));
}

const Node& RuntimeNodeAccess::NodeOf(const Graph& graph, NodeId id) {
  return graph.NodeForRuntime(id);
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

bool Graph::AllLiveForTesting(absl::Span<const NodeId> ids) const {
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
  info.op = n.op();
  info.op_def = n.op_def;
  for (const NodeInput& in : n.inputs) {
    info.inputs.emplace_back(heap_->NewHandle(in.node), in.index);
  }
  for (NodeId c : n.control_inputs) {
    info.control_inputs.push_back(heap_->NewHandle(c));
  }
  info.attrs = n.attrs();
  info.output_types.assign(n.output_types().begin(), n.output_types().end());
  info.output_shapes.assign(n.output_shapes().begin(), n.output_shapes().end());
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

void graph_internal::ReleaseScope(Names& names, const std::string& name) {
  WriterLock lock(names.heap->mu());
  names.index.ReleaseScope(name);
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

GcStats Graph::gc_stats() const { return collector_->stats(); }

void Graph::set_gc_policy(const GcPolicy& policy) {
  collector_->set_policy(policy);
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
  std::vector<std::string> out;
  out.reserve(path->chain.size() + 1);
  out.push_back(gc::HoldersText(*path));
  for (uint32_t index : path->chain) out.push_back(NodeAt(index).name);
  return out;
}

std::vector<OwnerUsage> Graph::LeakReport() const {
  ReaderLock lock(heap_->mu());
  return gc::UsageByOwner(*heap_);
}

std::vector<std::string> Graph::SavedGarbage() const {
  std::vector<std::string> out;
  collector_->ForEachSaved([&](const gc::Object& o) {
    const Node& n = static_cast<const Node&>(o);
    out.push_back(absl::StrCat(n.name, " (", n.op(), ")"));
  });
  return out;
}

absl::StatusOr<gc::PinScope> Graph::PinForTesting(
    absl::Span<const NodeId> ids) const {
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

size_t Graph::NodeTraitsTableSizeForTesting() const {
  ReaderLock lock(heap_->mu());
  return traits_.size();
}

}  // namespace graphgc
