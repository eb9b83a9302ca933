// categorical_crossentropy: one-hot (or soft) labels against probabilities
// (normalised to sum to one, as Keras does) or logits, with optional label
// smoothing towards 1/classes.
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  Output log_p;
  if (ctx.loss.from_logits || ctx.softmax_logits.has_value()) {
    GG_ASSIGN_OR_RETURN(
        log_p,
        ops::LogSoftmax(ctx.loss.from_logits ? ctx.y_pred : *ctx.softmax_logits,
                        {.name = ctx.Name("LogSoftmax")}));
  } else {
    GG_ASSIGN_OR_RETURN(
        Output total,
        ops::Sum(ctx.y_pred,
                 {.name = ctx.Name("Sum"), .axes = {-1}, .keep_dims = true}));
    GG_ASSIGN_OR_RETURN(Output p, ops::RealDiv(ctx.y_pred, total,
                                               {.name = ctx.Name("truediv")}));
    GG_ASSIGN_OR_RETURN(log_p, ClippedLog(p, ctx.scope));
  }
  Output labels = ctx.y_true;
  if (ctx.loss.label_smoothing != 0.f) {
    // y * (1 - s) + s / classes.
    const double s = ctx.loss.label_smoothing;
    GG_ASSIGN_OR_RETURN(Output keep, LossScalar(ctx, 1.0 - s, "smooth_keep"));
    GG_ASSIGN_OR_RETURN(
        Output add,
        LossScalar(ctx, s / static_cast<double>(ctx.units), "smooth_add"));
    GG_ASSIGN_OR_RETURN(
        labels, ops::Mul(labels, keep, {.name = ctx.Name("smooth_mul")}));
    GG_ASSIGN_OR_RETURN(labels,
                        ops::AddV2(labels, add, {.name = ctx.Name("smooth")}));
  }
  GG_ASSIGN_OR_RETURN(Output prod,
                      ops::Mul(labels, log_p, {.name = ctx.Name("mul")}));
  GG_ASSIGN_OR_RETURN(Output per_sample, SumLastAxis(prod, ctx.Name("Sum_1")));
  return ops::Neg(per_sample, {.name = ctx.Name("Neg")});
}

const LossKind& CategoricalCrossentropyKind() {
  static const LossKind kind{.name = "categorical_crossentropy",
                             .class_name = "CategoricalCrossentropy",
                             .order = 1,
                             .takes_from_logits = true,
                             .takes_label_smoothing = true,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(CategoricalCrossentropyKind);

}  // namespace models_internal
}  // namespace graphgc
