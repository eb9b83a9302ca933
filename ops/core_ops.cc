// RegisterCoreOps: every op file's registration, in one place (no static
// registrars, so nothing depends on link order or alwayslink), then the
// fusion rules over them (RegisterFusionRules), whose failure the registry
// records instead of aborting.
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ops/array_ops.h"
#include "ops/concat_ops.h"
#include "ops/conv_ops.h"
#include "ops/gather_ops.h"
#include "ops/fused_kernels.h"
#include "ops/fused_training_kernels.h"
#include "ops/math_ops.h"
#include "ops/nn_ops.h"
#include "ops/random_ops.h"
#include "ops/registry.h"
#include "ops/state_ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// The OpDef of `type` in `registry`, for RegisterFusionRules.
absl::StatusOr<const OpDef*> FusedOpDef(const OpRegistry& registry,
                                        absl::string_view type) {
  absl::StatusOr<const RegisteredOp*> op = registry.Lookup(type);
  if (!op.ok()) {
    return absl::NotFoundError(
        absl::StrCat("RegisterFusionRules: ", op.status().message()));
  }
  return &(*op)->def;
}

}  // namespace

absl::Status RegisterFusionRules(OpRegistry& registry) {
  GG_ASSIGN_OR_RETURN(const OpDef* matmul, FusedOpDef(registry, "MatMul"));
  GG_ASSIGN_OR_RETURN(const OpDef* bias_add, FusedOpDef(registry, "BiasAdd"));
  GG_ASSIGN_OR_RETURN(const OpDef* relu, FusedOpDef(registry, "Relu"));
  GG_ASSIGN_OR_RETURN(const OpDef* relu_grad, FusedOpDef(registry, "ReluGrad"));
  GG_ASSIGN_OR_RETURN(const OpDef* ones_like, FusedOpDef(registry, "OnesLike"));
  GG_ASSIGN_OR_RETURN(const OpDef* mul, FusedOpDef(registry, "Mul"));
  GG_ASSIGN_OR_RETURN(const OpDef* real_div, FusedOpDef(registry, "RealDiv"));
  GG_ASSIGN_OR_RETURN(const OpDef* reshape, FusedOpDef(registry, "Reshape"));
  GG_ASSIGN_OR_RETURN(const OpDef* size, FusedOpDef(registry, "Size"));
  GG_ASSIGN_OR_RETURN(const OpDef* cast, FusedOpDef(registry, "Cast"));
  GG_ASSIGN_OR_RETURN(const OpDef* read,
                      FusedOpDef(registry, "ReadVariableOp"));
  GG_ASSIGN_OR_RETURN(const OpDef* assign,
                      FusedOpDef(registry, "AssignVariableOp"));
  std::vector<FusionRule> rules = FusedMatMulRules(*matmul, *bias_add, *relu);
  rules.push_back(FusedMatMulReluGradRule(*matmul, *relu_grad));
  rules.push_back(FusedLossGradientRule(*ones_like, *mul, *real_div, *reshape));
  rules.push_back(FusedSizeCastRule(*size, *cast));
  rules.push_back(FusedScaleVariableRule(*read, *mul, *assign));
  return registry.RegisterFusions(std::move(rules));
}

void RegisterCoreOps(OpRegistry& registry) {
  RegisterArrayOps(registry);
  RegisterConcatOps(registry);
  RegisterGatherOps(registry);
  RegisterMathOps(registry);
  RegisterNnOps(registry);
  RegisterStateOps(registry);
  RegisterRandomOps(registry);
  RegisterConvOps(registry);
  registry.fusion_rules_status_ = RegisterFusionRules(registry);
}

}  // namespace graphgc
