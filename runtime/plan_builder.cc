#include "runtime/plan_builder.h"

#include <algorithm>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "ops/fused_kernels.h"
#include "runtime/algorithm.h"
#include "runtime/node.h"
#include "runtime/op_def.h"
#include "unsupported/Eigen/CXX11/Tensor"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
namespace exec {
namespace {

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
    return graph.NodeForRuntime(n.inputs[k].node).resource == nullptr;
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
  const Node& n = graph.NodeForRuntime(o.handle().id());
  if (need_index &&
      (o.index() < 0 || o.index() >= static_cast<int>(n.output_types.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Session::Run: ", what, " reads output ", o.index(), " of ", n.op, " '",
        n.name, "', which has ", n.output_types.size()));
  }
  return absl::OkStatus();
}

absl::Status AddFeeds(PlanBuild& b, const Feeds& feeds) {
  Plan& plan = *b.plan;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Output& o = feeds[i].first;
    GG_RETURN_IF_ERROR(CheckRunOutput(b.graph, o, absl::StrCat("feed ", i)));
    const Node& n = b.graph.NodeForRuntime(o.handle().id());
    FeedCheck check;
    check.slot = plan.num_slots++;
    check.dtype = n.output_types[o.index()];
    check.shape = n.output_shapes[o.index()];
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
      n.node = &b.graph.NodeForRuntime(n.id);
      return DfsMark::kNew;
    }
    absl::Status BackEdge(const NodeRef& from, const NodeRef& to,
                          absl::Span<const DfsFrame<NodeRef>>) {
      b.graph.heap().mu().AssertReaderHeld();
      const Node& other = b.graph.NodeForRuntime(to.id);
      return absl::InvalidArgumentError(absl::StrCat(
          "Session::Run: the graph has a cycle through ", other.op, " '",
          other.name, "' and ", from.node->op, " '", from.node->name, "'"));
    }
    absl::Status Finish(const NodeRef& n) {
      if (DispatchOf(*n.node) == OpDef::Dispatch::kFeed) {
        return absl::InvalidArgumentError(
            absl::StrCat(n.node->op, " '", n.node->name, "' must be fed"));
      }
      Plan& plan = *b.plan;
      b.step_of[n.id.index] = static_cast<uint32_t>(plan.steps.size());
      Step step;
      step.id = n.id;
      step.num_outputs = static_cast<uint32_t>(n.node->output_types.size());
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
    const Node& n = b.graph.NodeForRuntime(step.id);
    plan.pointers.AddStep(&n);
    step.output_base = plan.num_slots;
    plan.num_slots += step.num_outputs;
    for (uint32_t k = 0; k < step.num_outputs; ++k) {
      plan.output_checks.push_back({n.output_types[k], n.output_shapes[k]});
    }
  }
}

absl::Status BindKernelsAndFold(PlanBuild& b,
                                const Eigen::ThreadPoolDevice* device) {
  Plan& plan = *b.plan;
  b.constant_of.assign(plan.num_slots, -1);
  for (Step& step : plan.steps) {
    const Node& n = b.graph.NodeForRuntime(step.id);
    step.input_begin = static_cast<uint32_t>(plan.inputs.size());
    step.num_inputs = static_cast<uint32_t>(n.inputs.size());
    plan.max_inputs = std::max(plan.max_inputs, step.num_inputs);
    for (const NodeInput& in : n.inputs) {
      InputRef ref;
      ref.slot = SlotOf(b, in.node, in.index);
      ref.constant = b.constant_of[ref.slot];
      plan.inputs.push_back(ref);
      plan.pointers.AddInput(b.graph.NodeForRuntime(in.node).resource.get());
    }
    const absl::Span<const InputRef> refs(plan.inputs.data() + step.input_begin,
                                          step.num_inputs);
    const OpDef::Dispatch dispatch = DispatchOf(n);
    const bool has_kernel = n.op_def != nullptr && n.op_def->kernel;
    if (has_kernel) {
      step.kernel = n.op_def->bind ? n.op_def->bind(n.attrs) : n.op_def->kernel;
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

void FuseMatMulChains(PlanBuild& b, const std::vector<Output>& fetches) {
  Plan& plan = *b.plan;
  // Per slot: how many run-time readers it has (step inputs read from a
  // slot, fetches) and the step of the last input read from it.
  std::vector<uint32_t> readers(plan.num_slots, 0);
  std::vector<uint32_t> reader_step(plan.num_slots, kNoSlot);
  std::vector<uint32_t> producer(plan.num_slots, kNoSlot);
  for (uint32_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    for (uint32_t k = 0; k < step.num_outputs; ++k) {
      producer[step.output_base + k] = s;
    }
    if (step.kind == Step::Kind::kConstant) continue;
    for (uint32_t k = 0; k < step.num_inputs; ++k) {
      const InputRef& ref = plan.inputs[step.input_begin + k];
      if (ref.constant >= 0) continue;
      ++readers[ref.slot];
      reader_step[ref.slot] = s;
    }
  }
  for (const Output& o : fetches) {
    ++readers[SlotOf(b, o.handle().id(), o.index())];
  }
  // Nodes another step must run after: a chain holding one is left alone.
  absl::flat_hash_set<uint32_t> control_inputs;
  for (const Step& step : plan.steps) {
    for (NodeId c : b.graph.NodeForRuntime(step.id).control_inputs) {
      control_inputs.insert(c.index);
    }
  }
  auto type_of = [&](const Step& step) -> const std::string& {
    static const std::string kNone;
    const Node& n = b.graph.NodeForRuntime(step.id);
    return n.op_def != nullptr ? n.op_def->type : kNone;
  };
  // The one step that reads `slot`, when it runs and nothing else (no
  // other step, no fetch) reads the slot; else kNoSlot.
  auto sole_reader = [&](uint32_t slot) {
    return readers[slot] == 1 ? reader_step[slot] : kNoSlot;
  };
  for (uint32_t bs = 0; bs < plan.steps.size(); ++bs) {
    Step& bias_add = plan.steps[bs];
    if (bias_add.kind != Step::Kind::kRun || type_of(bias_add) != "BiasAdd" ||
        bias_add.num_inputs != 2 ||
        control_inputs.contains(bias_add.id.index)) {
      continue;
    }
    const InputRef& value = plan.inputs[bias_add.input_begin];
    if (value.constant >= 0 || value.slot < plan.feeds.size() ||
        sole_reader(value.slot) != bs) {
      continue;
    }
    Step& matmul = plan.steps[producer[value.slot]];
    if (matmul.kind != Step::Kind::kRun || type_of(matmul) != "MatMul" ||
        matmul.num_inputs != 2 || control_inputs.contains(matmul.id.index)) {
      continue;
    }
    const Node& matmul_node = b.graph.NodeForRuntime(matmul.id);
    const Node& bias_add_node = b.graph.NodeForRuntime(bias_add.id);
    FusedMatMulSpec spec{
        .transpose_a = GetAttrOr<bool>(matmul_node.attrs, "transpose_a", false),
        .transpose_b = GetAttrOr<bool>(matmul_node.attrs, "transpose_b", false),
        .matmul_name = matmul_node.name,
        .bias_add_name = bias_add_node.name};
    // The chain ends at a Relu that alone reads the BiasAdd, or at the
    // BiasAdd itself.
    Step* end = &bias_add;
    const uint32_t relu = sole_reader(bias_add.output_base);
    if (relu != kNoSlot && plan.steps[relu].kind == Step::Kind::kRun &&
        type_of(plan.steps[relu]) == "Relu" &&
        plan.steps[relu].num_inputs == 1) {
      end = &plan.steps[relu];
      spec.activation = FusedActivation::kRelu;
    }
    // The end step reads (a, b, bias), appended to plan.inputs with their
    // producers' resources; the MatMul and the BiasAdd become kSkip with no
    // inputs, so no later pass counts them as readers.
    const uint32_t begin = static_cast<uint32_t>(plan.inputs.size());
    const InputRef refs[3] = {plan.inputs[matmul.input_begin],
                              plan.inputs[matmul.input_begin + 1],
                              plan.inputs[bias_add.input_begin + 1]};
    const NodeInput* ins[3] = {&matmul_node.inputs[0], &matmul_node.inputs[1],
                               &bias_add_node.inputs[1]};
    for (int k = 0; k < 3; ++k) {
      plan.inputs.push_back(refs[k]);
      plan.pointers.AddInput(
          b.graph.NodeForRuntime(ins[k]->node).resource.get());
    }
    end->input_begin = begin;
    end->num_inputs = 3;
    end->kernel = BindFusedMatMul(std::move(spec));
    end->fused = true;
    plan.max_inputs = std::max(plan.max_inputs, 3u);
    for (Step* s : {&matmul, &bias_add}) {
      if (s == end) continue;
      s->kind = Step::Kind::kSkip;
      s->num_inputs = 0;
      s->kernel = nullptr;
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
  FuseMatMulChains(b, fetches);
  FindLastUses(b, fetches);
  MarkForwarding(*b.plan);
  StampPlan(b);
  return std::shared_ptr<const Plan>(std::move(b.plan));
}

}  // namespace exec
}  // namespace graphgc
