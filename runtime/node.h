// runtime/node.h
//
// Node: what a graph slot holds. Internal to runtime/ (its Bazel target is
// visible to //runtime and the runtime's tests only): ops/, serialize/ and
// everything above read a node through NodeView (runtime/node_view.h),
// users through NodeHandle / Output. Only the Graph makes a Node (the
// constructor takes a NodeKey, which only Graph can make). A node's fields
// are fixed when it is built (validate first, commit last), except its
// control inputs, which Graph::AddControlEdge may extend under the graph's
// lock. A strong handle or a pin keeps the Node object alive, so the
// runtime's own readers (RuntimeNodeAccess in runtime/graph.h names them)
// may read it for as long as they hold one.
#ifndef GRAPHGC_RUNTIME_NODE_H_
#define GRAPHGC_RUNTIME_NODE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "gc/heap.h"
#include "gc/node_id.h"
#include "runtime/attr_value.h"
#include "runtime/node_input.h"
#include "runtime/node_resource.h"
#include "runtime/node_traits.h"
#include "runtime/tensor.h"

namespace graphgc {

class Graph;
struct OpDef;  // runtime/op_def.h

// The pass a Node's constructor asks for: only Graph (and tests, through
// the greppable hook) can make one.
class NodeKey {
 public:
  static NodeKey ForTesting() { return NodeKey(); }

 private:
  friend class Graph;
  NodeKey() = default;
};

struct Node final : public gc::Object {
  explicit Node(NodeKey) {}

  // Nodes come from one process-wide pool of node-sized blocks
  // (util/fixed_size_pool.h), through each thread's stash of them
  // (util/pool_cache.h), not from malloc one at a time.
  static void* operator new(std::size_t size);
  static void operator delete(void* node, std::size_t size);

  std::string name;
  uint32_t base_length = 0;  // name.substr(0, base_length) was requested
  const OpDef* op_def = nullptr;
  absl::InlinedVector<NodeInput, 2> inputs;
  std::vector<NodeId> control_inputs;  // under the graph's lock
  // Op type, attributes, output types and shapes: shared with the graph's
  // other nodes of equal ones (runtime/node_traits.h).
  NodeTraits traits;
  std::shared_ptr<NodeResource> resource;

  const std::string& op() const { return traits.op(); }
  const AttrMap& attrs() const { return traits.attrs(); }
  absl::Span<const DataType> output_types() const {
    return traits.output_types();
  }
  absl::Span<const TensorShape> output_shapes() const {
    return traits.output_shapes();
  }

  int64_t ApproxBytes() const override;
  // A node holding state (a variable's buffer) is destroyed by the
  // collection that sweeps it; the others lazily (gc/collector.h).
  bool DestroyPromptly() const override { return resource != nullptr; }
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NODE_H_
