#include "runtime/plan_builder.h"

#include <algorithm>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "runtime/algorithm.h"
#include "runtime/fusion.h"
#include "runtime/node.h"
#include "runtime/op_def.h"
#include "unsupported/Eigen/CXX11/Tensor"
#include "util/float_mode.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
namespace exec {

// The plan builder's key to the graph's nodes (RuntimeNodeAccess,
// runtime/graph.h): defined here alone.
struct PlanBuilderNodes {
  static const Node& Of(const Graph& graph, NodeId id) {
    return RuntimeNodeAccess::NodeOf(graph, id);
  }
};

namespace {

// The node `id` names; the caller holds a handle or pin on it, or the
// graph's lock.
const Node& NodeOf(const Graph& graph, NodeId id) {
  return PlanBuilderNodes::Of(graph, id);
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
    absl::Span<const Tensor> constants)
    ABSL_SHARED_LOCKS_REQUIRED(graph.heap().mu()) {
  const OpDef& def = *n.op_def;
  // The stand-ins a kernel reads instead of run-time inputs: the values of
  // constant inputs, or for a shape-only op tensors of the inputs' static
  // shapes (its kernel reads nothing else).
  absl::InlinedVector<Tensor, 4> stand_ins;
  absl::InlinedVector<const Tensor*, 4> inputs;
  auto no_resource = [&](size_t k) {
    return NodeOf(graph, n.inputs[k].node).resource == nullptr;
  };
  auto all_constant = [&] {
    for (size_t k = 0; k < refs.size(); ++k) {
      if (refs[k].constant < 0 || !no_resource(k)) return false;
    }
    return true;
  };
  if (def.dispatch == OpDef::Dispatch::kConstant) {
    if (!refs.empty()) return std::nullopt;
  } else if (def.stateful || refs.empty()) {
    return std::nullopt;
  } else if (all_constant()) {
    for (const InputRef& r : refs) inputs.push_back(&constants[r.constant]);
  } else if (def.shape_only) {
    for (const NodeInput& in : n.inputs) {
      const Node& producer = NodeOf(graph, in.node);
      const DataType dtype = producer.output_types()[in.index];
      const TensorShape& shape = producer.output_shapes()[in.index];
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

// The slot output `index` of node `id` is read from: its feed's, or its
// step's.
uint32_t SlotOf(const PlanBuild& b, NodeId id, int index) {
  auto f = b.fed.find(OutputKey(id, index));
  if (f != b.fed.end()) return f->second;
  return b.plan->steps[b.step_of.at(id.index)].output_base +
         static_cast<uint32_t>(index);
}

OpDef::Dispatch DispatchOf(const Node& n) {
  return n.op_def != nullptr ? n.op_def->dispatch : OpDef::Dispatch::kKernel;
}

}  // namespace

uint64_t OutputKey(NodeId id, int index) {
  // Slot indices are below 2^24 (gc::Heap::kMaxSlots), output indices small.
  return (static_cast<uint64_t>(id.index) << 32) ^
         (static_cast<uint64_t>(id.generation) << 8) ^
         static_cast<uint64_t>(static_cast<uint32_t>(index));
}

absl::Status CheckRunOutput(const Graph& graph, const Output& o,
                            const std::string& what, bool need_index) {
  graph.heap().mu().AssertReaderHeld();
  if (!o.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Session::Run: ", what, " is an empty Output"));
  }
  if (o.graph() != &graph) {
    return absl::InvalidArgumentError(
        absl::StrCat("Session::Run: ", what,
                     " belongs to another graph than the "
                     "session's"));
  }
  if (!graph.heap().IsLive(o.handle().id())) {
    return absl::NotFoundError(absl::StrCat(
        "Session::Run: ", what, " names a node that was swept (slot ",
        o.handle().id().index, ")"));
  }
  const Node& n = NodeOf(graph, o.handle().id());
  if (need_index && (o.index() < 0 ||
                     o.index() >= static_cast<int>(n.output_types().size()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Session::Run: ", what, " reads output ", o.index(), " of ", n.op(),
        " '", n.name, "', which has ", n.output_types().size()));
  }
  return absl::OkStatus();
}

absl::Status AddFeeds(PlanBuild& b, const Feeds& feeds) {
  Plan& plan = *b.plan;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Output& o = feeds[i].first;
    GG_RETURN_IF_ERROR(CheckRunOutput(b.graph, o, absl::StrCat("feed ", i)));
    const Node& n = NodeOf(b.graph, o.handle().id());
    FeedCheck check;
    check.slot = plan.num_slots++;
    check.dtype = n.output_types()[o.index()];
    check.shape = n.output_shapes()[o.index()];
    check.name = absl::StrCat(n.name, ":", o.index());
    if (check.dtype == DT_RESOURCE) {
      return absl::InvalidArgumentError(
          absl::StrCat("Session::Run: feed '", check.name,
                       "' is a resource output, which "
                       "cannot be fed"));
    }
    if (!b.fed.emplace(OutputKey(o.handle().id(), o.index()), check.slot)
             .second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Session::Run: '", check.name, "' is fed twice"));
    }
    b.fed_nodes.insert(o.handle().id().index);
    plan.ids.push_back(o.handle().id());
    plan.feeds.push_back(std::move(check));
  }
  return absl::OkStatus();
}

absl::Status WalkSubgraph(PlanBuild& b, const std::vector<Output>& fetches,
                          const std::vector<Output>& targets) {
  // Depth-first walk from fetches and targets through data and control
  // inputs, stopping at fed outputs; post-order is a topological order.
  // Only the needed subgraph is visited.
  struct NodeRef {
    NodeId id;
    const Node* node = nullptr;  // set when discovered, under the lock
  };
  struct Walk {
    PlanBuild& b;
    size_t NumSuccessors(const NodeRef& n) const {
      return n.node->inputs.size() + n.node->control_inputs.size();
    }
    // Data inputs first, then control inputs; fed ones are not followed.
    std::optional<NodeRef> Successor(const NodeRef& n, size_t e) const {
      const size_t num_data = n.node->inputs.size();
      if (e < num_data) {
        const NodeInput& in = n.node->inputs[e];
        if (b.fed.contains(OutputKey(in.node, in.index))) return std::nullopt;
        return NodeRef{in.node};
      }
      const NodeId next = n.node->control_inputs[e - num_data];
      if (b.fed_nodes.contains(next.index)) return std::nullopt;
      return NodeRef{next};
    }
    // step_of holds kOpen while a node is on the walk's stack, then its
    // step. Reserved up front: a plan is built for every new model, and
    // growing the table rehashed it several times per build.
    DfsMark Discover(NodeRef& n) {
      auto [it, inserted] = b.step_of.try_emplace(n.id.index, kNoSlot);
      if (!inserted) {
        return it->second == kNoSlot ? DfsMark::kOpen : DfsMark::kDone;
      }
      b.graph.heap().mu().AssertReaderHeld();
      n.node = &NodeOf(b.graph, n.id);
      return DfsMark::kNew;
    }
    absl::Status BackEdge(const NodeRef& from, const NodeRef& to,
                          absl::Span<const DfsFrame<NodeRef>>) {
      b.graph.heap().mu().AssertReaderHeld();
      const Node& other = NodeOf(b.graph, to.id);
      return absl::InvalidArgumentError(absl::StrCat(
          "Session::Run: the graph has a cycle through ", other.op(), " '",
          other.name, "' and ", from.node->op(), " '", from.node->name, "'"));
    }
    absl::Status Finish(const NodeRef& n) {
      if (DispatchOf(*n.node) == OpDef::Dispatch::kFeed) {
        return absl::InvalidArgumentError(
            absl::StrCat(n.node->op(), " '", n.node->name, "' must be fed"));
      }
      Plan& plan = *b.plan;
      b.step_of[n.id.index] = static_cast<uint32_t>(plan.steps.size());
      Step step;
      step.id = n.id;
      step.num_outputs = static_cast<uint32_t>(n.node->output_types().size());
      plan.steps.push_back(step);
      plan.ids.push_back(n.id);
      return absl::OkStatus();
    }
  };
  b.step_of.reserve(256);
  Walk walk{b};
  PostOrderDfs<NodeRef, Walk> dfs(walk);
  auto visit = [&](NodeId root) { return dfs.Visit(NodeRef{root}); };

  // Fetches and targets: fetched outputs that are fed need no node.
  for (size_t i = 0; i < fetches.size(); ++i) {
    const Output& o = fetches[i];
    GG_RETURN_IF_ERROR(CheckRunOutput(b.graph, o, absl::StrCat("fetch ", i)));
    if (b.fed.contains(OutputKey(o.handle().id(), o.index()))) continue;
    GG_RETURN_IF_ERROR(visit(o.handle().id()));
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const Output& o = targets[i];
    GG_RETURN_IF_ERROR(CheckRunOutput(b.graph, o, absl::StrCat("target ", i),
                                      /*need_index=*/false));
    if (b.fed_nodes.contains(o.handle().id().index)) continue;
    GG_RETURN_IF_ERROR(visit(o.handle().id()));
  }
  return absl::OkStatus();
}

void AssignSlots(PlanBuild& b) {
  Plan& plan = *b.plan;
  plan.output_checks.resize(plan.num_slots);  // the feeds'
  for (Step& step : plan.steps) {
    const Node& n = NodeOf(b.graph, step.id);
    plan.pointers.AddStep(&n);
    step.output_base = plan.num_slots;
    plan.num_slots += step.num_outputs;
    for (uint32_t k = 0; k < step.num_outputs; ++k) {
      plan.output_checks.push_back({n.output_types()[k], n.output_shapes()[k]});
    }
  }
}

absl::Status BindKernelsAndFold(PlanBuild& b,
                                const Eigen::ThreadPoolDevice* device) {
  // Folded kernels compute what a run would (runtime/executor.h): with
  // denormals flushed to zero.
  ScopedFlushDenormals flush;
  Plan& plan = *b.plan;
  b.constant_of.assign(plan.num_slots, -1);
  for (Step& step : plan.steps) {
    const Node& n = NodeOf(b.graph, step.id);
    step.input_begin = static_cast<uint32_t>(plan.inputs.size());
    step.num_inputs = static_cast<uint32_t>(n.inputs.size());
    plan.max_inputs = std::max(plan.max_inputs, step.num_inputs);
    for (const NodeInput& in : n.inputs) {
      InputRef ref;
      ref.slot = SlotOf(b, in.node, in.index);
      ref.constant = b.constant_of[ref.slot];
      plan.inputs.push_back(ref);
      plan.pointers.AddInput(NodeOf(b.graph, in.node).resource.get());
    }
    const absl::Span<const InputRef> refs(plan.inputs.data() + step.input_begin,
                                          step.num_inputs);
    const OpDef::Dispatch dispatch = DispatchOf(n);
    const bool has_kernel = n.op_def != nullptr && n.op_def->kernel;
    if (has_kernel) {
      step.kernel =
          n.op_def->bind ? n.op_def->bind(n.attrs()) : n.op_def->kernel;
    }
    if (dispatch == OpDef::Dispatch::kHandle ||
        dispatch == OpDef::Dispatch::kNothing) {
      step.kind = Step::Kind::kSkip;
    } else if (has_kernel) {
      // What needs no kernel per run is computed now, once.
      GG_ASSIGN_OR_RETURN(std::optional<OpKernelContext::Outputs> folded,
                          Fold(b.graph, device, n, refs,
                               absl::MakeConstSpan(plan.output_checks)
                                   .subspan(step.output_base, step.num_outputs),
                               plan.constants));
      if (folded.has_value()) {
        step.kind = Step::Kind::kConstant;
        for (uint32_t k = 0; k < step.num_outputs; ++k) {
          b.constant_of[step.output_base + k] =
              static_cast<int32_t>(plan.constants.size());
          plan.constants.push_back(std::move((*folded)[k]));
        }
      }
    }
  }
  return absl::OkStatus();
}

namespace {

// Who reads what at run time, for FuseChains: per slot, how many readers it
// has (step inputs read from a slot, fetches) and the step of the last
// input read from it; the step producing each slot; the nodes another step
// waits on through a control input.
struct Readers {
  std::vector<uint32_t> count;
  std::vector<uint32_t> step;
  std::vector<uint32_t> producer;
  absl::flat_hash_set<uint32_t> control_inputs;

  // The one step that reads `slot`, when nothing else (no other input, no
  // fetch) reads it; else kNoSlot.
  uint32_t SoleReader(uint32_t slot) const {
    return count[slot] == 1 ? step[slot] : kNoSlot;
  }
};

Readers CountReaders(const PlanBuild& b, const std::vector<Output>& fetches)
    ABSL_SHARED_LOCKS_REQUIRED(b.graph.heap().mu()) {
  const Plan& plan = *b.plan;
  Readers r{.count = std::vector<uint32_t>(plan.num_slots, 0),
            .step = std::vector<uint32_t>(plan.num_slots, kNoSlot),
            .producer = std::vector<uint32_t>(plan.num_slots, kNoSlot)};
  for (uint32_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    for (uint32_t k = 0; k < step.num_outputs; ++k) {
      r.producer[step.output_base + k] = s;
    }
    for (NodeId c : NodeOf(b.graph, step.id).control_inputs) {
      r.control_inputs.insert(c.index);
    }
    if (step.kind == Step::Kind::kConstant) continue;
    for (uint32_t k = 0; k < step.num_inputs; ++k) {
      const InputRef& ref = plan.inputs[step.input_begin + k];
      if (ref.constant >= 0) continue;
      ++r.count[ref.slot];
      r.step[ref.slot] = s;
    }
  }
  for (const Output& o : fetches) {
    ++r.count[SlotOf(b, o.handle().id(), o.index())];
  }
  return r;
}

// Which input of the chain's k-th node (k >= 1) reads the node before it
// (FusionRule::links); kNoSlot for links that do not fit the chain, which
// then matches nothing.
uint32_t LinkInput(const FusionRule& rule, size_t k) {
  if (rule.links.empty()) return 0;
  if (rule.links.size() + 1 != rule.chain.size() || rule.links[k - 1] < 0) {
    return kNoSlot;
  }
  return static_cast<uint32_t>(rule.links[k - 1]);
}

// The steps `rule` matches from step `head` on (runtime/fusion.h), in chain
// order, or an empty vector.
absl::InlinedVector<uint32_t, 4> MatchChain(const PlanBuild& b,
                                            const Readers& readers,
                                            const FusionRule& rule,
                                            uint32_t head)
    ABSL_SHARED_LOCKS_REQUIRED(b.graph.heap().mu()) {
  const Plan& plan = *b.plan;
  auto runs_op = [&](uint32_t s, const OpDef* def) {
    const Step& step = plan.steps[s];
    return step.kind == Step::Kind::kRun && !step.fused &&
           NodeOf(b.graph, step.id).op_def == def;
  };
  absl::InlinedVector<uint32_t, 4> chain;
  if (rule.chain.size() < 2 || !runs_op(head, rule.chain[0])) return {};
  chain.push_back(head);
  for (size_t k = 1; k < rule.chain.size(); ++k) {
    const Step& prev = plan.steps[chain.back()];
    if (prev.num_outputs == 0 ||
        readers.control_inputs.contains(prev.id.index)) {
      return {};
    }
    for (uint32_t o = 1; o < prev.num_outputs; ++o) {
      if (readers.count[prev.output_base + o] != 0) return {};
    }
    const uint32_t next = readers.SoleReader(prev.output_base);
    if (next == kNoSlot || !runs_op(next, rule.chain[k])) return {};
    const Step& step = plan.steps[next];
    const uint32_t link_input = LinkInput(rule, k);
    if (link_input >= step.num_inputs) return {};
    const InputRef& link = plan.inputs[step.input_begin + link_input];
    if (link.constant >= 0 || link.slot != prev.output_base) return {};
    chain.push_back(next);
  }
  return chain;
}

}  // namespace

void FuseChains(PlanBuild& b, const std::vector<Output>& fetches) {
  Plan& plan = *b.plan;
  const Readers readers = CountReaders(b, fetches);
  for (uint32_t head = 0; head < plan.steps.size(); ++head) {
    const Step& head_step = plan.steps[head];
    if (head_step.kind != Step::Kind::kRun || head_step.fused) continue;
    const Node& head_node = NodeOf(b.graph, head_step.id);
    if (head_node.op_def == nullptr) continue;
    for (const std::shared_ptr<const FusionRule>& rule :
         head_node.op_def->fusions) {
      const absl::InlinedVector<uint32_t, 4> chain =
          MatchChain(b, readers, *rule, head);
      if (chain.empty()) continue;
      absl::InlinedVector<FusedNode, 4> nodes;
      for (uint32_t s : chain) {
        const Node& n = NodeOf(b.graph, plan.steps[s].id);
        nodes.push_back({.name = n.name, .attrs = &n.attrs()});
      }
      KernelFn kernel = rule->bind(nodes);
      if (!kernel) continue;
      // The end step reads the chain's inputs but its links, appended to
      // plan.inputs with their producers' resources; the other steps become
      // kSkip with no inputs, so no later pass counts them as readers.
      const uint32_t begin = static_cast<uint32_t>(plan.inputs.size());
      for (size_t k = 0; k < chain.size(); ++k) {
        Step& step = plan.steps[chain[k]];
        const Node& n = NodeOf(b.graph, step.id);
        const uint32_t link_input = k == 0 ? kNoSlot : LinkInput(*rule, k);
        for (uint32_t i = 0; i < step.num_inputs; ++i) {
          if (i == link_input) continue;
          const InputRef ref = plan.inputs[step.input_begin + i];
          plan.inputs.push_back(ref);
          plan.pointers.AddInput(
              NodeOf(b.graph, n.inputs[i].node).resource.get());
        }
        if (k + 1 < chain.size()) {
          step.kind = Step::Kind::kSkip;
          step.num_inputs = 0;
          step.kernel = nullptr;
        }
      }
      Step& end = plan.steps[chain.back()];
      end.input_begin = begin;
      end.num_inputs = static_cast<uint32_t>(plan.inputs.size()) - begin;
      end.kernel = std::move(kernel);
      end.fused = true;
      plan.max_inputs = std::max(plan.max_inputs, end.num_inputs);
      break;
    }
  }
}

void FindLastUses(PlanBuild& b, const std::vector<Output>& fetches) {
  Plan& plan = *b.plan;
  std::vector<uint32_t> last_reader(plan.num_slots, kNoSlot);
  for (const Step& step : plan.steps) {
    // A folded step reads nothing at run time, and a constant input is
    // read in place: neither makes a last reader.
    if (step.kind == Step::Kind::kConstant) continue;
    for (uint32_t k = 0; k < step.num_inputs; ++k) {
      const InputRef& ref = plan.inputs[step.input_begin + k];
      if (ref.constant < 0) last_reader[ref.slot] = step.input_begin + k;
    }
  }
  for (const Output& o : fetches) {
    const uint32_t slot = SlotOf(b, o.handle().id(), o.index());
    plan.fetch_slots.push_back(slot);
    plan.fetch_constants.push_back(b.constant_of[slot]);
    last_reader[slot] = kNoSlot;  // a fetched tensor is never taken
  }
  for (uint32_t r : last_reader) {
    if (r != kNoSlot) plan.inputs[r].take = true;
  }
}

void MarkForwarding(Plan& plan) {
  for (Step& step : plan.steps) {
    const InputRef* refs = plan.inputs.data() + step.input_begin;
    step.take_begin = static_cast<uint32_t>(plan.takes.size());
    for (uint32_t k = 0; k < step.num_inputs; ++k) {
      if (!refs[k].take) continue;
      plan.takes.push_back(refs[k].slot);
      bool read_twice = false;
      for (uint32_t j = 0; j < step.num_inputs; ++j) {
        read_twice |=
            j != k && refs[j].constant < 0 && refs[j].slot == refs[k].slot;
      }
      if (!read_twice && k < 32) step.forwardable |= 1u << k;
    }
    step.num_takes = static_cast<uint32_t>(plan.takes.size()) - step.take_begin;
  }
}

void StampPlan(PlanBuild& b) {
  // Through b.graph.heap(), the expression the annotation names (a local
  // reference would hide the lock from clang's analysis).
  Plan& plan = *b.plan;
  plan.edge_counts.reserve(plan.ids.size());
  for (NodeId id : plan.ids) {
    plan.edge_counts.push_back(
        static_cast<uint32_t>(b.graph.heap().edges(id.index).size()));
  }
  plan.current_as_of.store(b.graph.heap().structure_version(),
                           std::memory_order_relaxed);
}

absl::StatusOr<std::shared_ptr<const Plan>> BuildPlan(
    const Graph& graph, const Eigen::ThreadPoolDevice* device,
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets) {
  PlanBuild b(graph);
  // Locked through b.graph, the expression the passes' annotations name.
  ReaderLock lock(b.graph.heap().mu());
  GG_RETURN_IF_ERROR(AddFeeds(b, feeds));
  GG_RETURN_IF_ERROR(WalkSubgraph(b, fetches, targets));
  AssignSlots(b);
  GG_RETURN_IF_ERROR(BindKernelsAndFold(b, device));
  FuseChains(b, fetches);
  FindLastUses(b, fetches);
  MarkForwarding(*b.plan);
  StampPlan(b);
  return std::shared_ptr<const Plan>(std::move(b.plan));
}

}  // namespace exec
}  // namespace graphgc
