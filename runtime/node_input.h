// runtime/node_input.h
//
// NodeInput: one data input of a node, as the node records it: the
// producing node's id and the output index read. A plain value; the id is
// kept alive by the consuming node (a live node reaches its inputs), so it
// names a live node for as long as the consumer lives.
#ifndef GRAPHGC_RUNTIME_NODE_INPUT_H_
#define GRAPHGC_RUNTIME_NODE_INPUT_H_

#include "gc/node_id.h"

namespace graphgc {

struct NodeInput {
  NodeId node;
  int index = 0;
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NODE_INPUT_H_
