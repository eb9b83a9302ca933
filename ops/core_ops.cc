// RegisterCoreOps: every op file's registration, in one place (no static
// registrars, so nothing depends on link order or alwayslink).
#include "ops/array_ops.h"
#include "ops/conv_ops.h"
#include "ops/math_ops.h"
#include "ops/nn_ops.h"
#include "ops/random_ops.h"
#include "ops/registry.h"
#include "ops/state_ops.h"

namespace graphgc {

void RegisterCoreOps(OpRegistry& registry) {
  RegisterArrayOps(registry);
  RegisterMathOps(registry);
  RegisterNnOps(registry);
  RegisterStateOps(registry);
  RegisterRandomOps(registry);
  RegisterConvOps(registry);
}

}  // namespace graphgc
