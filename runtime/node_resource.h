// runtime/node_resource.h
//
// NodeResource: per-node state that is not a plain attribute, e.g. a
// variable's value. A node owns its resource (shared with the plans and
// builders that hold it) and the resource lives exactly as long as its node:
// it is swept with it. Subclasses say how they synchronise; the runtime
// hands a resource to the kernels of one run at a time only through the
// executor's pin.
#ifndef GRAPHGC_RUNTIME_NODE_RESOURCE_H_
#define GRAPHGC_RUNTIME_NODE_RESOURCE_H_

#include <cstdint>

namespace graphgc {

class NodeResource {
 public:
  virtual ~NodeResource() = default;
  // Bytes the resource holds, for leak reports; an estimate.
  virtual int64_t ApproxBytes() const { return 0; }
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_NODE_RESOURCE_H_
