// gc/node_id.h
//
// NodeId: the collector's name for a node, a slot index plus the slot's
// generation. A slot's generation changes when its node is swept, so an id
// kept past its node's death never names the slot's next occupant: stale
// ids are detected, never followed. Generation 0 is never used: a default
// NodeId is invalid.
#ifndef GRAPHGC_GC_NODE_ID_H_
#define GRAPHGC_GC_NODE_ID_H_

#include <cstdint>

namespace graphgc {

struct NodeId {
  uint32_t index = 0;
  uint32_t generation = 0;

  bool valid() const { return generation != 0; }
  friend bool operator==(NodeId a, NodeId b) {
    return a.index == b.index && a.generation == b.generation;
  }
  friend bool operator!=(NodeId a, NodeId b) { return !(a == b); }
  friend bool operator<(NodeId a, NodeId b) {
    return a.index != b.index ? a.index < b.index : a.generation < b.generation;
  }
  template <typename H>
  friend H AbslHashValue(H h, NodeId id) {
    return H::combine(std::move(h), id.index, id.generation);
  }
};

}  // namespace graphgc

#endif  // GRAPHGC_GC_NODE_ID_H_
