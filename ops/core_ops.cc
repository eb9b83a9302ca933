// RegisterCoreOps: every op file's registration, in one place (no static
// registrars, so nothing depends on link order or alwayslink), then the
// fusion rules over them.
#include <cassert>
#include <utility>
#include <vector>

#include "ops/array_ops.h"
#include "ops/conv_ops.h"
#include "ops/fused_kernels.h"
#include "ops/math_ops.h"
#include "ops/nn_ops.h"
#include "ops/random_ops.h"
#include "ops/registry.h"
#include "ops/state_ops.h"

namespace graphgc {
namespace {

// The fusion rules over the ops registered before them (so registering
// cannot fail).
void RegisterFusionRules(OpRegistry& registry) {
  absl::StatusOr<const RegisteredOp*> matmul = registry.Lookup("MatMul");
  absl::StatusOr<const RegisteredOp*> bias_add = registry.Lookup("BiasAdd");
  absl::StatusOr<const RegisteredOp*> relu = registry.Lookup("Relu");
  absl::StatusOr<const RegisteredOp*> relu_grad = registry.Lookup("ReluGrad");
  if (!matmul.ok() || !bias_add.ok() || !relu.ok() || !relu_grad.ok()) {
    assert(false);
    return;
  }
  std::vector<FusionRule> rules =
      FusedMatMulRules((*matmul)->def, (*bias_add)->def, (*relu)->def);
  rules.push_back(FusedMatMulReluGradRule((*matmul)->def, (*relu_grad)->def));
  for (FusionRule& rule : rules) {
    absl::Status s = registry.RegisterFusion(std::move(rule));
    assert(s.ok());
    (void)s;
  }
}

}  // namespace

void RegisterCoreOps(OpRegistry& registry) {
  RegisterArrayOps(registry);
  RegisterMathOps(registry);
  RegisterNnOps(registry);
  RegisterStateOps(registry);
  RegisterRandomOps(registry);
  RegisterConvOps(registry);
  RegisterFusionRules(registry);
}

}  // namespace graphgc
