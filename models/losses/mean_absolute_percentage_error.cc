// mean_absolute_percentage_error:
// 100 * mean(abs((y_true - y_pred) / maximum(abs(y_true), eps)), axis=-1).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output eps, LossScalar(ctx, kLossEpsilon, "epsilon"));
  GG_ASSIGN_OR_RETURN(Output hundred, LossScalar(ctx, 100.0, "hundred"));
  GG_ASSIGN_OR_RETURN(
      Output diff, ops::Sub(ctx.y_true, ctx.y_pred, {.name = ctx.Name("sub")}));
  GG_ASSIGN_OR_RETURN(Output abs_true, Abs(ctx.y_true, ctx.Name("abs_true")));
  GG_ASSIGN_OR_RETURN(
      Output denom, ops::Maximum(abs_true, eps, {.name = ctx.Name("Maximum")}));
  GG_ASSIGN_OR_RETURN(Output ratio,
                      ops::RealDiv(diff, denom, {.name = ctx.Name("truediv")}));
  GG_ASSIGN_OR_RETURN(Output abs, Abs(ratio, ctx.Name("abs")));
  GG_ASSIGN_OR_RETURN(Output mean, MeanLastAxis(abs, ctx.Name("Mean")));
  return ops::Mul(hundred, mean, {.name = ctx.Name("mul")});
}

const LossKind& MeanAbsolutePercentageErrorKind() {
  static const LossKind kind{.name = "mean_absolute_percentage_error",
                             .class_name = "MeanAbsolutePercentageError",
                             .aliases = {"mape", "MAPE"},
                             .order = 12,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(MeanAbsolutePercentageErrorKind);

}  // namespace models_internal
}  // namespace graphgc
