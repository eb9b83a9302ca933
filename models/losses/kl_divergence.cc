// kl_divergence: sum over the last axis of y log(y / p), y and p clipped
// to [eps, 1].
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> Clip(const LossContext& ctx, const Output& x,
                            const Output& eps, const Output& one,
                            const std::string& scope) {
  GG_ASSIGN_OR_RETURN(
      Output lo, ops::Maximum(x, eps, {.name = ctx.Name(scope + "/Maximum")}));
  return ops::Minimum(lo, one, {.name = ctx.Name(scope + "/Minimum")});
}

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output eps, LossScalar(ctx, kLossEpsilon, "epsilon"));
  GG_ASSIGN_OR_RETURN(Output one, LossScalar(ctx, 1.0, "one"));
  GG_ASSIGN_OR_RETURN(Output y, Clip(ctx, ctx.y_true, eps, one, "clip_true"));
  GG_ASSIGN_OR_RETURN(Output p, Clip(ctx, ctx.y_pred, eps, one, "clip_pred"));
  GG_ASSIGN_OR_RETURN(Output ratio,
                      ops::RealDiv(y, p, {.name = ctx.Name("truediv")}));
  GG_ASSIGN_OR_RETURN(Output log, ops::Log(ratio, {.name = ctx.Name("Log")}));
  GG_ASSIGN_OR_RETURN(Output prod, ops::Mul(y, log, {.name = ctx.Name("mul")}));
  return SumLastAxis(prod, ctx.Name("Sum"));
}

const LossKind& KLDivergenceKind() {
  static const LossKind kind{
      .name = "kl_divergence",
      .class_name = "KLDivergence",
      .aliases = {"kld", "KLD", "kullback_leibler_divergence"},
      .order = 16,
      .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(KLDivergenceKind);

}  // namespace models_internal
}  // namespace graphgc
