#include "runtime/gradient_walk.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "runtime/algorithm.h"
#include "runtime/node.h"
#include "runtime/op_def.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {

// The gradient walk's key to the graph's nodes (RuntimeNodeAccess,
// runtime/graph.h): defined here alone.
struct GradientWalkNodes {
  static const Node& Of(const Graph& graph, NodeId id) {
    return RuntimeNodeAccess::NodeOf(graph, id);
  }
};

namespace {

constexpr int kNoX = -1;

uint64_t EdgeKey(NodeId id, int index) {
  return (static_cast<uint64_t>(id.index) << 32) ^
         (static_cast<uint64_t>(id.generation) << 8) ^
         static_cast<uint64_t>(static_cast<uint32_t>(index));
}

// A node on the walk: its id, and the node once the walk reached it.
struct NodeRef {
  NodeId id;
  const Node* node = nullptr;
};

// What the walk learns about one node in y's backward data cone.
struct ConeNode {
  NodeId id;
  // Some x this node's outputs depend on (an index into xs), or kNoX: the
  // node is on a path from that x to y and gradients flow through it.
  int reaches_x = kNoX;
};

absl::Status CheckOutput(const Graph& g, const Output& o,
                         const std::string& what) {
  if (!o.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("AddGradients: ", what, " is an empty Output"));
  }
  if (o.graph() != &g) {
    return absl::InvalidArgumentError(absl::StrCat("AddGradients: ", what, " '",
                                                   o.name(),
                                                   "' belongs to another graph "
                                                   "than y"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Output>> AddGradientsWith(
    const GradientBuilders& builders, const Output& y,
    const std::vector<Output>& xs, const std::optional<Output>& grad_y) {
  if (!y.valid()) {
    return absl::InvalidArgumentError("AddGradients: y is an empty Output");
  }
  Graph& g = *y.graph();
  for (size_t i = 0; i < xs.size(); ++i) {
    GG_RETURN_IF_ERROR(CheckOutput(g, xs[i], absl::StrCat("x ", i)));
  }
  if (grad_y.has_value()) {
    GG_RETURN_IF_ERROR(CheckOutput(g, *grad_y, "grad_y"));
    if (grad_y->dtype() != y.dtype()) {
      return absl::InvalidArgumentError(
          absl::StrCat("AddGradients: grad_y '", grad_y->name(), "' is ",
                       DataTypeString(grad_y->dtype()), " but y '", y.name(),
                       "' is ", DataTypeString(y.dtype())));
    }
  }
  absl::flat_hash_map<uint64_t, int> x_of;  // edge -> first x index
  for (size_t i = 0; i < xs.size(); ++i) {
    x_of.try_emplace(EdgeKey(xs[i].handle().id(), xs[i].index()),
                     static_cast<int>(i));
  }

  // 1. y's backward cone through data inputs, inputs before consumers
  //    (iterative post-order), and which nodes depend on an x. Handles y and
  //    xs hold keep the cone alive; the lock keeps control edges still.
  std::vector<ConeNode> cone;
  absl::flat_hash_map<uint32_t, uint32_t> position;  // slot index -> cone
  {
    ReaderLock lock(g.heap().mu());
    // Successors are data inputs only. Data inputs are older than their
    // consumers, so the data cone has no cycle (no back edge) and
    // post-order finishes every input before its reader.
    struct Walk {
      const Graph& g;
      const absl::flat_hash_map<uint64_t, int>& x_of;
      std::vector<ConeNode>& cone;
      absl::flat_hash_map<uint32_t, uint32_t>& position;
      absl::flat_hash_set<uint32_t> seen;
      size_t NumSuccessors(const NodeRef& n) const {
        return n.node->inputs.size();
      }
      std::optional<NodeRef> Successor(const NodeRef& n, size_t i) const {
        return NodeRef{n.node->inputs[i].node, nullptr};
      }
      DfsMark Discover(NodeRef& n) {
        if (!seen.insert(n.id.index).second) return DfsMark::kDone;
        g.heap().mu().AssertReaderHeld();
        n.node = &GradientWalkNodes::Of(g, n.id);
        return DfsMark::kNew;
      }
      absl::Status BackEdge(const NodeRef&, const NodeRef&,
                            absl::Span<const DfsFrame<NodeRef>>) {
        return absl::OkStatus();  // never happens: see above
      }
      absl::Status Finish(const NodeRef& n) {
        ConeNode c{n.id};
        for (const NodeInput& in : n.node->inputs) {
          auto x = x_of.find(EdgeKey(in.node, in.index));
          if (x != x_of.end()) {
            c.reaches_x = x->second;
            break;
          }
          auto p = position.find(in.node.index);
          if (p != position.end() && cone[p->second].reaches_x != kNoX) {
            c.reaches_x = cone[p->second].reaches_x;
            break;
          }
        }
        position[n.id.index] = static_cast<uint32_t>(cone.size());
        cone.push_back(c);
        return absl::OkStatus();
      }
    };
    Walk walk{g, x_of, cone, position, {}};
    GG_RETURN_IF_ERROR((PostOrderDfs<NodeRef, Walk>(walk).Visit(
        NodeRef{y.handle().id(), nullptr})));
  }

  // 2. Reverse topological order: each node's output gradients are
  //    complete before its GradFn runs. Everything built is held only by
  //    `pending` and the result until we return, so on error it all becomes
  //    garbage. A node without a GradFn is refused only when a gradient
  //    actually reaches it (as TensorFlow does): an op whose consumers'
  //    GradFns give its output no gradient (a shape, an integer) is fine.
  absl::flat_hash_map<uint64_t, std::vector<Output>> pending;  // edge -> sum
  auto total = [&](NodeId id,
                   int index) -> absl::StatusOr<std::optional<Output>> {
    auto it = pending.find(EdgeKey(id, index));
    if (it == pending.end() || it->second.empty()) return std::nullopt;
    std::vector<Output>& parts = it->second;
    if (parts.size() > 1) {
      GG_ASSIGN_OR_RETURN(Output sum, builders.add_n(parts));
      parts.assign(1, std::move(sum));
    }
    return parts.front();
  };
  if (grad_y.has_value()) {
    pending[EdgeKey(y.handle().id(), y.index())].push_back(*grad_y);
  } else {
    GG_ASSIGN_OR_RETURN(Output seed, builders.ones_like(y));
    pending[EdgeKey(y.handle().id(), y.index())].push_back(std::move(seed));
  }

  for (auto c = cone.rbegin(); c != cone.rend(); ++c) {
    if (c->reaches_x == kNoX) continue;
    GG_ASSIGN_OR_RETURN(NodeHandle handle, g.HandleFor(c->id));
    GG_ASSIGN_OR_RETURN(NodeInfo info, g.Describe(handle));
    GradContext ctx;
    ctx.name_scope = builders.name_scope;
    bool any = false;
    for (int k = 0; k < static_cast<int>(info.output_types.size()); ++k) {
      ctx.outputs.emplace_back(handle, k);
      GG_ASSIGN_OR_RETURN(std::optional<Output> grad, total(c->id, k));
      any = any || grad.has_value();
      ctx.grad_outputs.push_back(std::move(grad));
    }
    if (!any) continue;  // nothing flows back through this node
    if (info.op_def == nullptr || !info.op_def->gradient) {
      return absl::InvalidArgumentError(
          absl::StrCat("AddGradients: no gradient for ", info.op, " '",
                       info.name, "' on the path from '", y.node_name(),
                       "' to '", xs[c->reaches_x].node_name(), "'"));
    }
    ctx.node = std::move(info);
    absl::StatusOr<std::vector<std::optional<Output>>> grads =
        ctx.node.op_def->gradient(ctx);
    if (!grads.ok()) {
      return absl::Status(
          grads.status().code(),
          absl::StrCat("AddGradients: gradient of ", ctx.node.op, " '",
                       ctx.node.name, "': ", grads.status().message()));
    }
    if (grads->size() != ctx.node.inputs.size()) {
      return absl::InternalError(absl::StrCat(
          "AddGradients: gradient of ", ctx.node.op, " '", ctx.node.name,
          "' gave ", grads->size(), " input gradients for ",
          ctx.node.inputs.size(), " inputs"));
    }
    for (size_t i = 0; i < grads->size(); ++i) {
      std::optional<Output>& grad = (*grads)[i];
      if (!grad.has_value()) continue;
      const Output& in = ctx.node.inputs[i];
      const uint64_t key = EdgeKey(in.handle().id(), in.index());
      // Keep only gradients that lead to an x: of an x itself, or of a
      // node that depends on one.
      auto p = position.find(in.handle().id().index);
      const bool leads_to_x =
          x_of.contains(key) ||
          (p != position.end() && cone[p->second].reaches_x != kNoX);
      if (leads_to_x) pending[key].push_back(std::move(*grad));
    }
  }

  std::vector<Output> result;
  result.reserve(xs.size());
  for (const Output& x : xs) {
    GG_ASSIGN_OR_RETURN(std::optional<Output> grad,
                        total(x.handle().id(), x.index()));
    if (grad.has_value()) {
      result.push_back(std::move(*grad));
    } else {
      GG_ASSIGN_OR_RETURN(Output zeros, builders.zeros_like(x));
      result.push_back(std::move(zeros));
    }
  }
  return result;
}

}  // namespace graphgc
