// huber: mean over the last axis of 0.5 e^2 where |e| <= delta, else
// delta |e| - 0.5 delta^2 (e = y_pred - y_true), written without a select
// as 0.5 q^2 + delta (|e| - q) with q = min(|e|, delta).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output delta, LossScalar(ctx, ctx.loss.delta, "delta"));
  GG_ASSIGN_OR_RETURN(Output half, LossScalar(ctx, 0.5, "half"));
  GG_ASSIGN_OR_RETURN(Output error, ops::Sub(ctx.y_pred, ctx.y_true,
                                             {.name = ctx.Name("sub")}));
  GG_ASSIGN_OR_RETURN(Output abs, Abs(error, ctx.Name("abs")));
  GG_ASSIGN_OR_RETURN(Output q,
                      ops::Minimum(abs, delta, {.name = ctx.Name("Minimum")}));
  GG_ASSIGN_OR_RETURN(Output q2, ops::Square(q, {.name = ctx.Name("Square")}));
  GG_ASSIGN_OR_RETURN(Output quad,
                      ops::Mul(half, q2, {.name = ctx.Name("mul")}));
  GG_ASSIGN_OR_RETURN(Output rest,
                      ops::Sub(abs, q, {.name = ctx.Name("sub_1")}));
  GG_ASSIGN_OR_RETURN(Output lin,
                      ops::Mul(delta, rest, {.name = ctx.Name("mul_1")}));
  GG_ASSIGN_OR_RETURN(Output sum,
                      ops::AddV2(quad, lin, {.name = ctx.Name("add")}));
  return MeanLastAxis(sum, ctx.Name("Mean"));
}

const LossKind& HuberKind() {
  static const LossKind kind{.name = "huber",
                             .class_name = "Huber",
                             .object_name = "huber_loss",
                             .order = 14,
                             .takes_delta = true,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(HuberKind);

}  // namespace models_internal
}  // namespace graphgc
