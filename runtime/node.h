// runtime/node.h
//
// Node: what a graph slot holds. Private to the runtime: users, models and
// callbacks reach nodes only through NodeHandle / Output. A node's fields
// are fixed when it is built (validate first, commit last), except its
// control inputs, which Graph::AddControlEdge may extend under the graph's
// lock. A strong handle or a pin keeps the Node object alive, so runtime
// code may read it through Graph::NodeForRuntime() for as long as it holds
// one.
#ifndef GRAPHGC_RUNTIME_NODE_H_
#define GRAPHGC_RUNTIME_NODE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "gc/heap.h"
#include "gc/node_id.h"
#include "runtime/attr_value.h"
#include "runtime/tensor.h"

namespace graphgc {

struct OpDef;      // runtime/op_def.h
struct NameGroup;  // runtime/name_index.cc

// Per-node state that is not a plain attribute, e.g. a variable's value. It
// lives exactly as long as its node (it is swept with it).
class NodeResource {
 public:
  virtual ~NodeResource() = default;
  virtual int64_t ApproxBytes() const { return 0; }
};

struct NodeInput {
  NodeId node;
  int index = 0;
};

struct Node final : public gc::Object {
  std::string name;
  uint32_t base_length = 0;         // name.substr(0, base_length) was requested
  NameGroup* name_group = nullptr;  // the graph's name index's, under its lock
  std::string op;
  const OpDef* op_def = nullptr;
  absl::InlinedVector<NodeInput, 2> inputs;
  std::vector<NodeId> control_inputs;  // under the graph's lock
  AttrMap attrs;
  absl::InlinedVector<DataType, 1> output_types;
  absl::InlinedVector<TensorShape, 1> output_shapes;
  std::shared_ptr<NodeResource> resource;

  int64_t ApproxBytes() const override;
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NODE_H_
