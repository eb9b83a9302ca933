// ops/state_ops.h
//
// Registration of graphgc's state ops (kernels, shape functions, gradients);
// RegisterCoreOps calls it once when the global registry is built. Private
// to //ops: users build these ops through ops/ops.h.
//
// Thread safety: call only while the registry is being built.
#ifndef GRAPHGC_OPS_STATE_OPS_H_
#define GRAPHGC_OPS_STATE_OPS_H_

#include "ops/registry.h"
#include "ops/resources.h"
#include "runtime/node_resource.h"

namespace graphgc {

void RegisterStateOps(OpRegistry& registry);

// The variable `r` is (a VarHandleOp's resource, which kernels reach as
// OpKernelContext::input_resource), or nullptr for any other resource or
// none.
VariableResource* AsVariable(NodeResource* r);

}  // namespace graphgc

#endif  // GRAPHGC_OPS_STATE_OPS_H_
