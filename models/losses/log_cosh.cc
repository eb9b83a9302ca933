// log_cosh: mean over the last axis of x + softplus(-2x) - log(2), x =
// y_pred - y_true (log(cosh(x)) without overflow).
#include <cmath>

#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output minus_two, LossScalar(ctx, -2.0, "minus_two"));
  GG_ASSIGN_OR_RETURN(Output log2, LossScalar(ctx, std::log(2.0), "log2"));
  GG_ASSIGN_OR_RETURN(
      Output x, ops::Sub(ctx.y_pred, ctx.y_true, {.name = ctx.Name("sub")}));
  GG_ASSIGN_OR_RETURN(Output m2x,
                      ops::Mul(x, minus_two, {.name = ctx.Name("mul")}));
  GG_ASSIGN_OR_RETURN(Output soft, Softplus(m2x, ctx.Name("softplus")));
  GG_ASSIGN_OR_RETURN(Output sum,
                      ops::AddV2(x, soft, {.name = ctx.Name("add")}));
  GG_ASSIGN_OR_RETURN(Output lc,
                      ops::Sub(sum, log2, {.name = ctx.Name("sub_1")}));
  return MeanLastAxis(lc, ctx.Name("Mean"));
}

const LossKind& LogCoshKind() {
  static const LossKind kind{.name = "log_cosh",
                             .class_name = "LogCosh",
                             .aliases = {"logcosh"},
                             .order = 15,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(LogCoshKind);

}  // namespace models_internal
}  // namespace graphgc
