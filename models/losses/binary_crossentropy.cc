// binary_crossentropy: mean over the last axis of
// -(y log p + (1 - y) log(1 - p)) with p clipped to [eps, 1 - eps]; from
// logits x: relu(x) - x y + log(1 + exp(-|x|)). Label smoothing s: y (1 - s)
// + s / 2.
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  Output y = ctx.y_true;
  if (ctx.loss.label_smoothing != 0.f) {
    const double s = ctx.loss.label_smoothing;
    GG_ASSIGN_OR_RETURN(Output keep, LossScalar(ctx, 1.0 - s, "smooth_keep"));
    GG_ASSIGN_OR_RETURN(Output add, LossScalar(ctx, 0.5 * s, "smooth_add"));
    GG_ASSIGN_OR_RETURN(y, ops::Mul(y, keep, {.name = ctx.Name("smooth_mul")}));
    GG_ASSIGN_OR_RETURN(y, ops::AddV2(y, add, {.name = ctx.Name("smooth")}));
  }
  Output elementwise;
  if (ctx.loss.from_logits) {
    const Output& x = ctx.y_pred;
    GG_ASSIGN_OR_RETURN(Output soft, Softplus(x, ctx.Name("softplus")));
    GG_ASSIGN_OR_RETURN(Output xy, ops::Mul(x, y, {.name = ctx.Name("mul")}));
    // softplus(x) - x y = relu(x) - x y + log(1 + exp(-|x|)).
    GG_ASSIGN_OR_RETURN(elementwise,
                        ops::Sub(soft, xy, {.name = ctx.Name("sub")}));
  } else {
    GG_ASSIGN_OR_RETURN(Output one, LossScalar(ctx, 1.0, "one"));
    GG_ASSIGN_OR_RETURN(Output log_p, ClippedLog(ctx.y_pred, ctx.scope));
    GG_ASSIGN_OR_RETURN(Output q,
                        ops::Sub(one, ctx.y_pred, {.name = ctx.Name("sub")}));
    GG_ASSIGN_OR_RETURN(Output log_q, ClippedLog(q, ctx.Name("log_1_minus")));
    GG_ASSIGN_OR_RETURN(Output ny,
                        ops::Sub(one, y, {.name = ctx.Name("sub_1")}));
    GG_ASSIGN_OR_RETURN(Output a,
                        ops::Mul(y, log_p, {.name = ctx.Name("mul")}));
    GG_ASSIGN_OR_RETURN(Output b,
                        ops::Mul(ny, log_q, {.name = ctx.Name("mul_1")}));
    GG_ASSIGN_OR_RETURN(Output sum,
                        ops::AddV2(a, b, {.name = ctx.Name("add")}));
    GG_ASSIGN_OR_RETURN(elementwise, ops::Neg(sum, {.name = ctx.Name("Neg")}));
  }
  return MeanLastAxis(elementwise, ctx.Name("Mean"));
}

const LossKind& BinaryCrossentropyKind() {
  static const LossKind kind{.name = "binary_crossentropy",
                             .class_name = "BinaryCrossentropy",
                             .aliases = {"bce", "BCE"},
                             .order = 2,
                             .takes_from_logits = true,
                             .takes_label_smoothing = true,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(BinaryCrossentropyKind);

}  // namespace models_internal
}  // namespace graphgc
