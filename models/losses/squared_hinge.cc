// squared_hinge: mean(square(maximum(1 - y_true * y_pred, 0)), axis=-1),
// labels {0, 1} mapped to {-1, 1} (HingeLabels).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output margin, HingeMargin(ctx));
  GG_ASSIGN_OR_RETURN(Output sq,
                      ops::Square(margin, {.name = ctx.Name("Square")}));
  return MeanLastAxis(sq, ctx.Name("Mean"));
}

const LossKind& SquaredHingeKind() {
  static const LossKind kind{.name = "squared_hinge",
                             .class_name = "SquaredHinge",
                             .order = 19,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(SquaredHingeKind);

}  // namespace models_internal
}  // namespace graphgc
