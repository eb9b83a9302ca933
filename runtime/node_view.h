// runtime/node_view.h
//
// NodeView: a read-only view of one node, for code outside runtime/ (op
// builders and shape checks in ops/, export in serialize/, tests) that must
// read what a node was built with. Node itself is internal to runtime/.
//
// Lifetime is in the type: a view holds a strong NodeHandle (a copy of the
// one it was made from: one atomic increment, no lock), so the node it
// shows, and every node that node reaches, stays alive and in place while
// the view lives, whatever else is dropped or collected. The references
// and spans its accessors return are valid while the view (or another
// handle to the node) lives. There is no way to make a view from a bare
// NodeId: input(k) gives the view of an input's producer, which shares the
// consumer's handle (the consumer keeps its inputs alive).
//
// A view is made from a valid handle of a graph that still exists (a live
// node, as every handle's node is); an empty handle is a programming error.
// Thread safety: a node's fields never change once it is built, except its
// control inputs, which control_inputs() copies under the graph's lock; a
// view may be read from any thread.
#ifndef GRAPHGC_RUNTIME_NODE_VIEW_H_
#define GRAPHGC_RUNTIME_NODE_VIEW_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "gc/handle.h"
#include "gc/node_id.h"
#include "runtime/attr_value.h"
#include "runtime/graph.h"
#include "runtime/node_input.h"
#include "runtime/node_resource.h"
#include "runtime/tensor.h"

namespace graphgc {

struct Node;   // runtime/node.h
struct OpDef;  // runtime/op_def.h
class OpKernelContext;

class NodeView {
 public:
  // The node `node` holds; `node` must be a valid handle.
  explicit NodeView(NodeHandle node);
  // The node that produces `output`; `output` must be valid.
  explicit NodeView(const Output& output) : NodeView(output.handle()) {}

  const std::string& name() const;
  const std::string& op() const;
  // The op's definition (nullptr for a node built without one).
  const OpDef* op_def() const;
  // Data inputs, in order: the producer's id and output index.
  absl::Span<const NodeInput> inputs() const;
  // The producer of data input `k` (0 <= k < inputs().size()), as a view
  // that keeps this node's handle.
  NodeView input(size_t k) const;
  // A copy of the control inputs, taken under the graph's lock (they may
  // grow: Graph::AddControlEdge).
  std::vector<NodeId> control_inputs() const;
  const AttrMap& attrs() const;
  absl::Span<const DataType> output_types() const;
  // Static shapes; dimensions may be -1 (unknown until run time).
  absl::Span<const TensorShape> output_shapes() const;
  // The node's resource (a variable's state), or nullptr. Mutable: it is
  // the state kernels update; the node's description stays read-only.
  NodeResource* resource() const;

 private:
  friend class OpKernelContext;  // runs a kernel on the viewed node
  NodeView(NodeHandle holder, const Node& node)
      : holder_(std::move(holder)), node_(&node) {}

  NodeHandle holder_;  // keeps *node_ alive: the node's or a consumer's
  const Node* node_;
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NODE_VIEW_H_
