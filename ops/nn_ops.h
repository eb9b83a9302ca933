// ops/nn_ops.h
//
// Registration of graphgc's nn ops (kernels, shape functions, gradients);
// RegisterCoreOps calls it once when the global registry is built. Private
// to //ops: users build these ops through ops/ops.h.
//
// Thread safety: call only while the registry is being built.
#ifndef GRAPHGC_OPS_NN_OPS_H_
#define GRAPHGC_OPS_NN_OPS_H_

#include "ops/registry.h"

namespace graphgc {

void RegisterNnOps(OpRegistry& registry);

}  // namespace graphgc

#endif  // GRAPHGC_OPS_NN_OPS_H_
