#include "runtime/session.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/node.h"
#include "runtime/op_def.h"
#include "unsupported/Eigen/CXX11/Tensor"
#include "unsupported/Eigen/CXX11/ThreadPool"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
namespace session_internal {

inline constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();

// One node to run: where its inputs come from and where its outputs go.
struct Step {
  NodeId id;
  // The node itself, for the kernel's context. Valid while the plan's ids
  // are pinned, which every run does before it executes the plan; looking
  // it up in the heap each run missed cache on most steps.
  const Node* node = nullptr;
  // The op's kernel, copied from its OpDef (or bound to the node's
  // attributes, OpDef::bind) when the plan is built; empty when the op has
  // none. The plan's steps are walked in order, while reaching each OpDef
  // (and the node) missed cache on most steps.
  KernelFn kernel;
  uint32_t input_begin = 0;  // first entry in Plan::inputs
  uint32_t num_inputs = 0;
  uint32_t output_base = 0;  // its output k goes to slot output_base + k
  uint32_t num_outputs = 0;
  // The slots this step reads last (InputRef::take), cleared once its
  // kernel returns: Plan::takes[take_begin, take_begin + num_takes).
  uint32_t take_begin = 0;
  uint32_t num_takes = 0;
  // Bit k: input k is taken and no other input of the step reads its
  // slot, so the kernel may take the tensor over as an output
  // (OpKernelContext::forward_input_or_allocate_output). Inputs below 32.
  uint32_t forwardable = 0;
  // kRun: run the kernel. kConstant: nothing to run; the kernel's outputs
  // were computed when the plan was built (Plan::constants, which readers
  // and fetches reach through InputRef::constant). kSkip: nothing to run
  // (NoOp, resource handles).
  enum class Kind : uint8_t { kRun, kConstant, kSkip };
  Kind kind = Kind::kRun;
};

struct InputRef {
  uint32_t slot = 0;
  // The last reader of a slot no fetch needs clears the slot once its
  // kernel returns, so intermediate buffers are freed as early as possible.
  bool take = false;
  // The producer's NodeResource (a variable's state), which the kernel sees
  // for this input, or nullptr. It lives as long as the producer, and a
  // plan only runs while every node it names is pinned.
  NodeResource* resource = nullptr;
  // Index in Plan::constants of the input's value when the plan computed
  // it once (a Const's or a folded step's output), or -1. Kernels read such
  // an input in place: its slot is never filled, and no run copies it.
  int32_t constant = -1;
};

// What a step's output must be: its node's output dtype and static shape,
// copied next to the plan's other per-step data (DT_INVALID for a fed
// slot, which no kernel writes).
struct OutputCheck {
  DataType dtype = DT_INVALID;
  TensorShape shape;
};

struct FeedCheck {
  uint32_t slot = 0;
  DataType dtype = DT_INVALID;
  TensorShape shape;
  std::string name;  // "x:0"
};

// An execution plan: NodeIds and slot numbers only (no handles), so a cached
// plan keeps nothing alive. Immutable once built; shared by concurrent runs.
struct Plan {
  std::vector<NodeId> ids;  // every node the plan names (pinned per run)
  std::vector<Step> steps;  // topological order
  std::vector<InputRef> inputs;
  std::vector<uint32_t> takes;             // slots, per Step::take_begin
  std::vector<OutputCheck> output_checks;  // per slot
  std::vector<FeedCheck> feeds;            // in the order of the Run's feeds
  std::vector<uint32_t> fetch_slots;
  std::vector<int32_t> fetch_constants;  // as InputRef::constant, per fetch
  std::vector<Tensor> constants;         // outputs of the kConstant steps
  uint32_t num_slots = 0;
  uint32_t max_inputs = 0;
  uint64_t structure_version = 0;
  // Heap::allocations() when it was built: every node it names is older.
  int64_t allocations = 0;
  // The heap's free count when a run last found every id live (Graph::Pin):
  // until a slot is freed, later runs skip the check.
  mutable std::atomic<int64_t> live_as_of{-1};
};

// The cache key: the ids and output indices of feeds, fetches, targets.
struct PlanKey {
  // Inline for the usual few feeds and fetches: one is made per run.
  absl::InlinedVector<uint32_t, 24> words;
  friend bool operator==(const PlanKey& a, const PlanKey& b) {
    return a.words == b.words;
  }
  template <typename H>
  friend H AbslHashValue(H h, const PlanKey& k) {
    return H::combine(std::move(h), k.words);
  }
};

struct PlanCache {
  static constexpr size_t kMaxPlans = 1024;

  Mutex mu;
  absl::flat_hash_map<PlanKey, std::shared_ptr<const Plan>> plans
      ABSL_GUARDED_BY(mu);
  // Drops every plan that names a node no longer live in `graph`. Costs
  // the size of this session's plans, not of the collection: with hundreds
  // of sessions alive (one per model), building a set of the swept ids in
  // each made every collection O(sessions x swept). And it is called only
  // when a collection swept a node no newer than the newest plan (a sweep
  // listener's horizon), so a minor collection that freed only newer nodes
  // does not call it at all.
  void DropDead(const Graph& graph) ABSL_LOCKS_EXCLUDED(mu) {
    std::vector<std::shared_ptr<const Plan>> dropped;  // freed unlocked
    WriterLock l(mu);
    for (auto it = plans.begin(); it != plans.end();) {
      if (!graph.AllLive(it->second->ids)) {
        dropped.push_back(std::move(it->second));
        plans.erase(it++);
      } else {
        ++it;
      }
    }
  }
};

}  // namespace session_internal

namespace {

using session_internal::FeedCheck;
using session_internal::InputRef;
using session_internal::kNoSlot;
using session_internal::OutputCheck;
using session_internal::Plan;
using session_internal::PlanCache;
using session_internal::PlanKey;
using session_internal::Step;

using Feeds = std::vector<std::pair<Output, Tensor>>;

void AppendKey(const Output& o, absl::InlinedVector<uint32_t, 24>& words) {
  words.push_back(o.handle().id().index);
  words.push_back(o.handle().id().generation);
  words.push_back(static_cast<uint32_t>(o.index()));
}

PlanKey MakeKey(const Feeds& feeds, const std::vector<Output>& fetches,
                const std::vector<Output>& targets) {
  PlanKey key;
  key.words.reserve(3 + 3 * (feeds.size() + fetches.size() + targets.size()));
  key.words.push_back(static_cast<uint32_t>(feeds.size()));
  key.words.push_back(static_cast<uint32_t>(fetches.size()));
  key.words.push_back(static_cast<uint32_t>(targets.size()));
  for (const auto& f : feeds) AppendKey(f.first, key.words);
  for (const Output& o : fetches) AppendKey(o, key.words);
  for (const Output& o : targets) AppendKey(o, key.words);
  return key;
}

uint64_t OutputKey(NodeId id, int index) {
  // Slot indices are below 2^24 (gc::Heap::kMaxSlots), output indices small.
  return (static_cast<uint64_t>(id.index) << 32) ^
         (static_cast<uint64_t>(id.generation) << 8) ^
         static_cast<uint64_t>(static_cast<uint32_t>(index));
}

// A kernel's failure, named for its node: kernels normally name it
// (OpKernelContext::InvalidArgument); one that did not gets it prefixed,
// keeping the code.
absl::Status KernelError(const Node& node, const absl::Status& s) {
  if (absl::StrContains(s.message(), absl::StrCat("'", node.name, "'"))) {
    return s;
  }
  return absl::Status(
      s.code(), absl::StrCat(node.op, " '", node.name, "': ", s.message()));
}

// Whether a kernel's output `t` is what `check`, the plan's copy of its
// node's declared dtype and static shape, allows. Inline: the executor
// tests every output of every step with it.
inline bool OutputMatches(const OutputCheck& check, const Tensor& t) {
  return check.dtype == DT_RESOURCE ||  // the consumer reads the resource
         (t.dtype() == check.dtype && check.shape.IsCompatibleWith(t.shape()));
}

// Checks a kernel's outputs against `checks` (OutputMatches); the node
// names the error.
absl::Status CheckOutputs(const Node& node,
                          absl::Span<const OutputCheck> checks,
                          absl::Span<const Tensor> outs) {
  for (size_t k = 0; k < checks.size(); ++k) {
    const Tensor& t = outs[k];
    if (!OutputMatches(checks[k], t)) {
      return absl::InternalError(absl::StrCat(
          node.op, " '", node.name, "': kernel produced output ", k, " as ",
          t.IsInitialized() ? absl::StrCat(DataTypeString(t.dtype()), " ",
                                           t.shape().DebugString())
                            : std::string("nothing"),
          ", expected ", DataTypeString(checks[k].dtype), " ",
          checks[k].shape.DebugString()));
    }
  }
  return absl::OkStatus();
}

// A folded step's outputs are kept by the plan; larger ones are computed
// per run instead.
constexpr int64_t kMaxFoldedBytes = int64_t{1} << 20;

// The outputs of node `n` when a plan can compute them once, at build:
// for a Const (no inputs), for a stateless op whose inputs are all such
// values (constant folding), and for a shape-only op (OpDef::shape_only)
// whose inputs' static shapes are fully defined. nullopt when the step
// must run each time. `refs` are its inputs (InputRef::constant indexes
// `constants`), `checks` its outputs' declared dtypes and shapes.
absl::StatusOr<std::optional<OpKernelContext::Outputs>> Fold(
    const Graph& graph, const Eigen::ThreadPoolDevice* device, const Node& n,
    absl::Span<const InputRef> refs, absl::Span<const OutputCheck> checks,
    absl::Span<const Tensor> constants) {
  const OpDef& def = *n.op_def;
  // The stand-ins a kernel reads instead of run-time inputs: the values of
  // constant inputs, or for a shape-only op tensors of the inputs' static
  // shapes (its kernel reads nothing else).
  absl::InlinedVector<Tensor, 4> stand_ins;
  absl::InlinedVector<const Tensor*, 4> inputs;
  if (def.dispatch == OpDef::Dispatch::kConstant) {
    if (!refs.empty()) return std::nullopt;
  } else if (def.stateful || refs.empty()) {
    return std::nullopt;
  } else if (std::all_of(refs.begin(), refs.end(), [&](const InputRef& r) {
               return r.resource == nullptr && r.constant >= 0;
             })) {
    for (const InputRef& r : refs) inputs.push_back(&constants[r.constant]);
  } else if (def.shape_only) {
    for (const NodeInput& in : n.inputs) {
      const Node& producer = graph.NodeForRuntime(in.node);
      const DataType dtype = producer.output_types[in.index];
      const TensorShape& shape = producer.output_shapes[in.index];
      int64_t stand_in_bytes = 0;  // unknown dims fail the check too
      if (dtype == DT_RESOURCE ||
          !MultiplySizes(shape.num_elements(), DataTypeSize(dtype),
                         &stand_in_bytes, kMaxFoldedBytes)) {
        return std::nullopt;
      }
      GG_ASSIGN_OR_RETURN(Tensor t, Tensor::Uninitialized(dtype, shape));
      stand_ins.push_back(std::move(t));
    }
    for (const Tensor& t : stand_ins) inputs.push_back(&t);
  } else {
    return std::nullopt;
  }
  const absl::InlinedVector<NodeResource*, 4> no_resources(inputs.size(),
                                                           nullptr);
  OpKernelContext ctx(n, inputs, no_resources, device, /*step_id=*/0);
  // Its error is the one every run would have met.
  if (absl::Status s = def.kernel(ctx); !s.ok()) return KernelError(n, s);
  GG_RETURN_IF_ERROR(CheckOutputs(n, checks, ctx.outputs()));
  int64_t bytes = 0;
  for (const Tensor& t : ctx.outputs()) bytes += t.TotalBytes();
  if (bytes > kMaxFoldedBytes && def.dispatch != OpDef::Dispatch::kConstant) {
    return std::nullopt;  // cheaper to compute per run than to keep
  }
  OpKernelContext::Outputs outs;
  for (Tensor& t : ctx.outputs()) outs.push_back(std::move(t));
  return outs;
}

}  // namespace

Session::Session(Graph& g, SessionOptions options)
    : graph_(g), cache_(std::make_shared<PlanCache>()) {
  const int threads = std::max(1, options.intra_op_threads);
  auto pool = std::make_unique<Eigen::ThreadPool>(threads);
  device_ = std::make_unique<Eigen::ThreadPoolDevice>(pool.get(), threads);
  pool_ = std::move(pool);
  // The listener holds the cache, not the session: a notification racing
  // with ~Session still touches live memory.
  // It runs only inside this graph's collections, so `graph` is alive then.
  std::shared_ptr<PlanCache> cache = cache_;
  const Graph* graph = &graph_;
  listener_id_ = graph_.AddSweepListener(
      [cache, graph](const CollectEvent&) { cache->DropDead(*graph); },
      /*horizon=*/0);
  listener_ = graph_.RegistrationFor(listener_id_);
}

// Touches only the registration, which outlives the graph harmlessly.
Session::~Session() { listener_.Reset(); }

size_t Session::cached_plans_ForTesting() const {
  ReaderLock l(cache_->mu);
  return cache_->plans.size();
}

absl::StatusOr<int64_t> Session::PlanSizeForTesting(
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets) const {
  GG_ASSIGN_OR_RETURN(PlanPtr plan, BuildPlan(feeds, fetches, targets));
  return static_cast<int64_t>(plan->steps.size());
}

absl::StatusOr<Session::PlanPtr> Session::BuildPlan(
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets) const {
  gc::Heap& heap = graph_.heap();
  // Checks an Output given to Run; `what` is "fetch 2", "feed 0", ...
  auto check_output = [&](const Output& o, const std::string& what,
                          bool need_index = true) -> absl::Status {
    heap.mu().AssertReaderHeld();
    if (!o.valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Session::Run: ", what, " is an empty Output"));
    }
    if (o.graph() != &graph_) {
      return absl::InvalidArgumentError(
          absl::StrCat("Session::Run: ", what,
                       " belongs to another graph than the "
                       "session's"));
    }
    if (!heap.IsLive(o.handle().id())) {
      return absl::NotFoundError(absl::StrCat(
          "Session::Run: ", what, " names a node that was swept (slot ",
          o.handle().id().index, ")"));
    }
    const Node& n = graph_.NodeForRuntime(o.handle().id());
    if (need_index && (o.index() < 0 ||
                       o.index() >= static_cast<int>(n.output_types.size()))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Session::Run: ", what, " reads output ", o.index(), " of ", n.op,
          " '", n.name, "', which has ", n.output_types.size()));
    }
    return absl::OkStatus();
  };

  auto plan = std::make_shared<Plan>();
  ReaderLock lock(heap.mu());
  plan->structure_version = graph_.structure_version();
  plan->allocations = heap.allocations();

  // Feeds: each gets a slot; fed_nodes marks nodes with any output fed (they
  // count as done for control dependencies).
  absl::flat_hash_map<uint64_t, uint32_t> fed;  // OutputKey -> slot
  absl::flat_hash_set<uint32_t> fed_nodes;      // slot indices
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Output& o = feeds[i].first;
    GG_RETURN_IF_ERROR(check_output(o, absl::StrCat("feed ", i)));
    const Node& n = graph_.NodeForRuntime(o.handle().id());
    FeedCheck check;
    check.slot = plan->num_slots++;
    check.dtype = n.output_types[o.index()];
    check.shape = n.output_shapes[o.index()];
    check.name = absl::StrCat(n.name, ":", o.index());
    if (check.dtype == DT_RESOURCE) {
      return absl::InvalidArgumentError(
          absl::StrCat("Session::Run: feed '", check.name,
                       "' is a resource output, which "
                       "cannot be fed"));
    }
    if (!fed.emplace(OutputKey(o.handle().id(), o.index()), check.slot)
             .second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Session::Run: '", check.name, "' is fed twice"));
    }
    fed_nodes.insert(o.handle().id().index);
    plan->ids.push_back(o.handle().id());
    plan->feeds.push_back(std::move(check));
  }

  // Depth-first walk from fetches and targets through data and control
  // inputs, stopping at fed outputs; post-order is a topological order.
  // Only the needed subgraph is visited.
  // Slot index -> kOpen while on the walk's stack, then the node's step.
  // Reserved up front: a plan is built for every new model, and growing the
  // table rehashed it several times per build.
  constexpr uint32_t kOpen = kNoSlot;
  absl::flat_hash_map<uint32_t, uint32_t> step_of;
  step_of.reserve(256);
  struct Frame {
    NodeId id;
    const Node* node;   // pinned by the caller's lock on the heap
    uint32_t next = 0;  // data inputs first, then control inputs
  };
  std::vector<Frame> stack;
  stack.reserve(64);
  auto visit = [&](NodeId root) -> absl::Status {
    if (!step_of.try_emplace(root.index, kOpen).second) {
      return absl::OkStatus();
    }
    stack.push_back(Frame{root, &graph_.NodeForRuntime(root)});
    while (!stack.empty()) {
      Frame& top = stack.back();
      const Node& n = *top.node;
      const uint32_t num_data = static_cast<uint32_t>(n.inputs.size());
      const uint32_t num_all =
          num_data + static_cast<uint32_t>(n.control_inputs.size());
      if (top.next < num_all) {
        const uint32_t e = top.next++;
        NodeId next;
        if (e < num_data) {
          const NodeInput& in = n.inputs[e];
          if (fed.contains(OutputKey(in.node, in.index))) continue;
          next = in.node;
        } else {
          next = n.control_inputs[e - num_data];
          if (fed_nodes.contains(next.index)) continue;
        }
        auto [it, inserted] = step_of.try_emplace(next.index, kOpen);
        if (inserted) {
          stack.push_back(Frame{next, &graph_.NodeForRuntime(next)});
        } else if (it->second == kOpen) {
          const Node& other = graph_.NodeForRuntime(next);
          return absl::InvalidArgumentError(absl::StrCat(
              "Session::Run: the graph has a cycle through ", other.op, " '",
              other.name, "' and ", n.op, " '", n.name, "'"));
        }
        continue;
      }
      if (n.op == "Placeholder") {
        return absl::InvalidArgumentError(
            absl::StrCat("Placeholder '", n.name, "' must be fed"));
      }
      step_of[top.id.index] = static_cast<uint32_t>(plan->steps.size());
      Step step;
      step.id = top.id;
      step.num_outputs = static_cast<uint32_t>(n.output_types.size());
      plan->steps.push_back(step);
      plan->ids.push_back(top.id);
      stack.pop_back();
    }
    return absl::OkStatus();
  };

  // Fetches and targets: fetched outputs that are fed need no node.
  for (size_t i = 0; i < fetches.size(); ++i) {
    const Output& o = fetches[i];
    GG_RETURN_IF_ERROR(check_output(o, absl::StrCat("fetch ", i)));
    if (fed.contains(OutputKey(o.handle().id(), o.index()))) continue;
    GG_RETURN_IF_ERROR(visit(o.handle().id()));
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const Output& o = targets[i];
    GG_RETURN_IF_ERROR(check_output(o, absl::StrCat("target ", i),
                                    /*need_index=*/false));
    if (fed_nodes.contains(o.handle().id().index)) continue;
    GG_RETURN_IF_ERROR(visit(o.handle().id()));
  }

  // Slots: feeds first, then every step's outputs in order.
  plan->output_checks.resize(plan->num_slots);
  for (Step& step : plan->steps) {
    const Node& n = graph_.NodeForRuntime(step.id);
    step.node = &n;
    step.output_base = plan->num_slots;
    plan->num_slots += step.num_outputs;
    for (uint32_t k = 0; k < step.num_outputs; ++k) {
      plan->output_checks.push_back({n.output_types[k], n.output_shapes[k]});
    }
  }
  auto slot_of = [&](NodeId id, int index) -> uint32_t {
    auto f = fed.find(OutputKey(id, index));
    if (f != fed.end()) return f->second;
    return plan->steps[step_of.at(id.index)].output_base +
           static_cast<uint32_t>(index);
  };
  std::vector<uint32_t> last_reader(plan->num_slots, kNoSlot);
  // Slot -> index in plan->constants of its value when the plan computes it
  // once (a Const's output or a folded step's), or -1.
  std::vector<int32_t> constant_of(plan->num_slots, -1);
  for (Step& step : plan->steps) {
    const Node& n = graph_.NodeForRuntime(step.id);
    step.input_begin = static_cast<uint32_t>(plan->inputs.size());
    step.num_inputs = static_cast<uint32_t>(n.inputs.size());
    plan->max_inputs = std::max(plan->max_inputs, step.num_inputs);
    for (const NodeInput& in : n.inputs) {
      InputRef ref;
      ref.slot = slot_of(in.node, in.index);
      ref.resource = graph_.NodeForRuntime(in.node).resource.get();
      ref.constant = constant_of[ref.slot];
      plan->inputs.push_back(ref);
    }
    const absl::Span<const InputRef> refs(
        plan->inputs.data() + step.input_begin, step.num_inputs);
    const OpDef::Dispatch dispatch =
        n.op_def != nullptr ? n.op_def->dispatch : OpDef::Dispatch::kKernel;
    const bool has_kernel = n.op_def != nullptr && n.op_def->kernel;
    if (has_kernel) {
      step.kernel = n.op_def->bind ? n.op_def->bind(n.attrs) : n.op_def->kernel;
    }
    if (dispatch == OpDef::Dispatch::kHandle ||
        (!has_kernel && n.op == "NoOp")) {
      step.kind = Step::Kind::kSkip;
    } else if (has_kernel) {
      // What needs no kernel per run is computed now, once.
      GG_ASSIGN_OR_RETURN(std::optional<OpKernelContext::Outputs> folded,
                          Fold(graph_, device_.get(), n, refs,
                               absl::MakeConstSpan(plan->output_checks)
                                   .subspan(step.output_base, step.num_outputs),
                               plan->constants));
      if (folded.has_value()) {
        step.kind = Step::Kind::kConstant;
        for (uint32_t k = 0; k < step.num_outputs; ++k) {
          constant_of[step.output_base + k] =
              static_cast<int32_t>(plan->constants.size());
          plan->constants.push_back(std::move((*folded)[k]));
        }
      }
    }
    // A folded step reads nothing at run time, and a constant input is
    // read in place: neither makes a last reader.
    if (step.kind != Step::Kind::kConstant) {
      for (uint32_t k = 0; k < step.num_inputs; ++k) {
        if (refs[k].constant < 0) {
          last_reader[refs[k].slot] = step.input_begin + k;
        }
      }
    }
  }
  for (const Output& o : fetches) {
    const uint32_t slot = slot_of(o.handle().id(), o.index());
    plan->fetch_slots.push_back(slot);
    plan->fetch_constants.push_back(constant_of[slot]);
    last_reader[slot] = kNoSlot;  // a fetched tensor is never taken
  }
  for (uint32_t r : last_reader) {
    if (r != kNoSlot) plan->inputs[r].take = true;
  }
  for (Step& step : plan->steps) {
    const InputRef* refs = plan->inputs.data() + step.input_begin;
    step.take_begin = static_cast<uint32_t>(plan->takes.size());
    for (uint32_t k = 0; k < step.num_inputs; ++k) {
      if (!refs[k].take) continue;
      plan->takes.push_back(refs[k].slot);
      bool read_twice = false;
      for (uint32_t j = 0; j < step.num_inputs; ++j) {
        read_twice |=
            j != k && refs[j].constant < 0 && refs[j].slot == refs[k].slot;
      }
      if (!read_twice && k < 32) step.forwardable |= 1u << k;
    }
    step.num_takes =
        static_cast<uint32_t>(plan->takes.size()) - step.take_begin;
  }
  return PlanPtr(std::move(plan));
}

absl::StatusOr<Session::PlanPtr> Session::GetPlan(
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets, bool force_rebuild) {
  PlanKey key = MakeKey(feeds, fetches, targets);
  if (!force_rebuild) {
    ReaderLock l(cache_->mu);
    auto it = cache_->plans.find(key);
    if (it != cache_->plans.end() &&
        it->second->structure_version == graph_.structure_version()) {
      return it->second;
    }
  }
  GG_ASSIGN_OR_RETURN(PlanPtr plan, BuildPlan(feeds, fetches, targets));
  plan_builds_.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<const Plan> replaced;  // freed unlocked
  {
    WriterLock l(cache_->mu);
    if (cache_->plans.size() >= PlanCache::kMaxPlans) cache_->plans.clear();
    auto [it, inserted] = cache_->plans.try_emplace(std::move(key), plan);
    if (!inserted) {
      replaced = std::move(it->second);
      it->second = plan;
    }
  }
  // The listener's horizon is the newest plan's (it only moves forward).
  graph_.RaiseSweepListenerHorizon(listener_id_, plan->allocations);
  return plan;
}

absl::StatusOr<std::vector<Tensor>> Session::Run(
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets) {
  GG_ASSIGN_OR_RETURN(PlanPtr plan, GetPlan(feeds, fetches, targets, false));
  absl::StatusOr<gc::PinScope> pin = graph_.Pin(plan->ids, &plan->live_as_of);
  if (!pin.ok()) {
    // A node of the cached plan was swept between the sweep and the
    // listener that drops the plan: build it again. If a fetch itself is
    // gone, building says so.
    GG_ASSIGN_OR_RETURN(plan, GetPlan(feeds, fetches, targets, true));
    pin = graph_.Pin(plan->ids, &plan->live_as_of);
    if (!pin.ok()) {
      return absl::AbortedError(absl::StrCat(
          "Session::Run: a node of the run was swept while it started: ",
          pin.status().message()));
    }
  }
  return Execute(*plan, feeds);
}

absl::StatusOr<std::vector<Tensor>> Session::Execute(const Plan& plan,
                                                     const Feeds& feeds) {
  std::vector<Tensor> slots(plan.num_slots);
  for (size_t i = 0; i < feeds.size(); ++i) {
    const FeedCheck& check = plan.feeds[i];
    const Tensor& t = feeds[i].second;
    if (t.dtype() != check.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("Session::Run: feed '", check.name, "' expects a ",
                       DataTypeString(check.dtype), " tensor, got ",
                       DataTypeString(t.dtype())));
    }
    if (!check.shape.IsCompatibleWith(t.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Session::Run: feed '", check.name, "' has shape ",
          t.shape().DebugString(), ", incompatible with its static shape ",
          check.shape.DebugString()));
    }
    slots[check.slot] = t;
  }

  const int64_t step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  // Inline for the usual few inputs: no allocation per run.
  absl::InlinedVector<const Tensor*, 16> in_storage(plan.max_inputs, nullptr);
  absl::InlinedVector<NodeResource*, 16> resource_storage(plan.max_inputs,
                                                          nullptr);
  // Raw views: InlinedVector's operator[] tests for inline storage on every
  // access, which was a fifth of this loop's instructions.
  const Tensor** const in = in_storage.data();
  NodeResource** const resources = resource_storage.data();
  for (const Step& step : plan.steps) {
    const InputRef* refs = plan.inputs.data() + step.input_begin;
    // A constant's consumers and fetches read it from the plan.
    if (step.kind != Step::Kind::kRun) continue;
    const Node& node = *step.node;
    for (uint32_t k = 0; k < step.num_inputs; ++k) {
      in[k] = refs[k].constant >= 0 ? &plan.constants[refs[k].constant]
                                    : &slots[refs[k].slot];
      resources[k] = refs[k].resource;
    }
    // The kernel writes its outputs straight into their slots.
    const absl::Span<Tensor> outs(slots.data() + step.output_base,
                                  step.num_outputs);
    OpKernelContext ctx(
        node, absl::Span<const Tensor* const>(in, step.num_inputs),
        absl::Span<NodeResource* const>(resources, step.num_inputs),
        device_.get(), step_id, outs);
    ctx.set_forwardable_inputs(step.forwardable);
    if (!step.kernel) {
      return absl::UnimplementedError(absl::StrCat(
          "Session::Run: ", node.op, " '", node.name, "' has no kernel"));
    }
    if (absl::Status s = step.kernel(ctx); !s.ok()) {
      return KernelError(node, s);
    }
    // Let go of each input this step read last, so its buffer is freed (or
    // an optimizer finds its variable unshared) after its last reader
    // rather than at the end of the run.
    const uint32_t* takes = plan.takes.data() + step.take_begin;
    for (uint32_t k = 0; k < step.num_takes; ++k) slots[takes[k]].Clear();
    // The plan's copy of what the node declares, tested inline; the node
    // and CheckOutputs only for the error.
    const OutputCheck* checks = plan.output_checks.data() + step.output_base;
    for (uint32_t k = 0; k < step.num_outputs; ++k) {
      if (!OutputMatches(checks[k], outs[k])) {
        return CheckOutputs(node, absl::MakeConstSpan(checks, step.num_outputs),
                            outs);
      }
    }
  }

  std::vector<Tensor> result;
  result.reserve(plan.fetch_slots.size());
  for (size_t i = 0; i < plan.fetch_slots.size(); ++i) {
    const int32_t constant = plan.fetch_constants[i];
    result.push_back(constant >= 0 ? plan.constants[constant]
                                   : slots[plan.fetch_slots[i]]);
  }
  return result;
}

}  // namespace graphgc
