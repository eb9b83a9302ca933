// mean_absolute_error: mean(abs(y_true - y_pred), axis=-1).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(
      Output diff, ops::Sub(ctx.y_true, ctx.y_pred, {.name = ctx.Name("sub")}));
  GG_ASSIGN_OR_RETURN(Output abs, Abs(diff, ctx.Name("abs")));
  return MeanLastAxis(abs, ctx.Name("Mean"));
}

const LossKind& MeanAbsoluteErrorKind() {
  static const LossKind kind{.name = "mean_absolute_error",
                             .class_name = "MeanAbsoluteError",
                             .aliases = {"mae", "MAE"},
                             .order = 11,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(MeanAbsoluteErrorKind);

}  // namespace models_internal
}  // namespace graphgc
