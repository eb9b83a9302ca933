// sparse_categorical_crossentropy: class ids against probabilities or
// logits, through SparseSoftmaxCrossEntropyWithLogits (see models/losses.h).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  Output logits;
  if (ctx.loss.from_logits) {
    logits = ctx.y_pred;
  } else if (ctx.softmax_logits.has_value()) {
    logits = *ctx.softmax_logits;
  } else {
    GG_ASSIGN_OR_RETURN(logits, ClippedLog(ctx.y_pred, ctx.scope));
  }
  GG_ASSIGN_OR_RETURN(
      ops::SoftmaxCrossEntropyOutputs xent,
      ops::SparseSoftmaxCrossEntropyWithLogits(
          logits, ctx.y_true,
          {.name = ctx.Name("SparseSoftmaxCrossEntropyWithLogits")}));
  return xent.loss;
}

const LossKind& SparseCategoricalCrossentropyKind() {
  static const LossKind kind{.name = "sparse_categorical_crossentropy",
                             .class_name = "SparseCategoricalCrossentropy",
                             .order = 0,
                             .sparse_labels = true,
                             .takes_from_logits = true,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(SparseCategoricalCrossentropyKind);

}  // namespace models_internal
}  // namespace graphgc
