// mean_squared_logarithmic_error: mean(square(log(max(y_pred, eps) + 1) -
// log(max(y_true, eps) + 1)), axis=-1).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> LogOnePlus(const LossContext& ctx, const Output& x,
                                  const Output& eps, const Output& one,
                                  const std::string& scope) {
  GG_ASSIGN_OR_RETURN(
      Output m, ops::Maximum(x, eps, {.name = ctx.Name(scope + "/Maximum")}));
  GG_ASSIGN_OR_RETURN(Output p,
                      ops::AddV2(m, one, {.name = ctx.Name(scope + "/add")}));
  return ops::Log(p, {.name = ctx.Name(scope + "/Log")});
}

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output eps, LossScalar(ctx, kLossEpsilon, "epsilon"));
  GG_ASSIGN_OR_RETURN(Output one, LossScalar(ctx, 1.0, "one"));
  GG_ASSIGN_OR_RETURN(Output first,
                      LogOnePlus(ctx, ctx.y_pred, eps, one, "first_log"));
  GG_ASSIGN_OR_RETURN(Output second,
                      LogOnePlus(ctx, ctx.y_true, eps, one, "second_log"));
  GG_ASSIGN_OR_RETURN(Output diff,
                      ops::Sub(first, second, {.name = ctx.Name("sub")}));
  GG_ASSIGN_OR_RETURN(Output sq,
                      ops::Square(diff, {.name = ctx.Name("Square")}));
  return MeanLastAxis(sq, ctx.Name("Mean"));
}

const LossKind& MeanSquaredLogarithmicErrorKind() {
  static const LossKind kind{.name = "mean_squared_logarithmic_error",
                             .class_name = "MeanSquaredLogarithmicError",
                             .aliases = {"msle", "MSLE"},
                             .order = 13,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(MeanSquaredLogarithmicErrorKind);

}  // namespace models_internal
}  // namespace graphgc
