// mean_squared_error: mean(square(y_pred - y_true), axis=-1).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(
      Output diff, ops::Sub(ctx.y_pred, ctx.y_true, {.name = ctx.Name("sub")}));
  GG_ASSIGN_OR_RETURN(Output sq,
                      ops::Square(diff, {.name = ctx.Name("Square")}));
  return MeanLastAxis(sq, ctx.Name("Mean"));
}

const LossKind& MeanSquaredErrorKind() {
  static const LossKind kind{.name = "mean_squared_error",
                             .class_name = "MeanSquaredError",
                             .aliases = {"mse", "MSE"},
                             .order = 10,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(MeanSquaredErrorKind);

}  // namespace models_internal
}  // namespace graphgc
