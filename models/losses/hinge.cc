// hinge: mean(maximum(1 - y_true * y_pred, 0), axis=-1), labels {0, 1}
// mapped to {-1, 1} (HingeLabels).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output margin, HingeMargin(ctx));
  return MeanLastAxis(margin, ctx.Name("Mean"));
}

const LossKind& HingeKind() {
  static const LossKind kind{.name = "hinge",
                             .class_name = "Hinge",
                             .order = 18,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(HingeKind);

}  // namespace models_internal
}  // namespace graphgc
