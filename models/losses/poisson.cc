// poisson: mean(y_pred - y_true * log(y_pred + eps), axis=-1).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output eps, LossScalar(ctx, kLossEpsilon, "epsilon"));
  GG_ASSIGN_OR_RETURN(Output shifted,
                      ops::AddV2(ctx.y_pred, eps, {.name = ctx.Name("add")}));
  GG_ASSIGN_OR_RETURN(Output log, ops::Log(shifted, {.name = ctx.Name("Log")}));
  GG_ASSIGN_OR_RETURN(Output prod,
                      ops::Mul(ctx.y_true, log, {.name = ctx.Name("mul")}));
  GG_ASSIGN_OR_RETURN(Output diff,
                      ops::Sub(ctx.y_pred, prod, {.name = ctx.Name("sub")}));
  return MeanLastAxis(diff, ctx.Name("Mean"));
}

const LossKind& PoissonKind() {
  static const LossKind kind{.name = "poisson",
                             .class_name = "Poisson",
                             .order = 17,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(PoissonKind);

}  // namespace models_internal
}  // namespace graphgc
