// cosine_similarity: -sum(l2_normalize(y_true) * l2_normalize(y_pred))
// over the last axis, l2_normalize(x) = x / sqrt(max(sum(x^2), 1e-12)).
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> Normalize(const LossContext& ctx, const Output& x,
                                 const Output& floor,
                                 const std::string& scope) {
  GG_ASSIGN_OR_RETURN(Output sq,
                      ops::Square(x, {.name = ctx.Name(scope + "/Square")}));
  GG_ASSIGN_OR_RETURN(Output sum,
                      ops::Sum(sq, {.name = ctx.Name(scope + "/Sum"),
                                    .axes = {-1},
                                    .keep_dims = true}));
  GG_ASSIGN_OR_RETURN(
      Output kept,
      ops::Maximum(sum, floor, {.name = ctx.Name(scope + "/Maximum")}));
  GG_ASSIGN_OR_RETURN(Output norm,
                      ops::Sqrt(kept, {.name = ctx.Name(scope + "/Sqrt")}));
  return ops::RealDiv(x, norm, {.name = ctx.Name(scope + "/truediv")});
}

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output floor, LossScalar(ctx, 1e-12, "norm_floor"));
  GG_ASSIGN_OR_RETURN(Output t, Normalize(ctx, ctx.y_true, floor, "true"));
  GG_ASSIGN_OR_RETURN(Output p, Normalize(ctx, ctx.y_pred, floor, "pred"));
  GG_ASSIGN_OR_RETURN(Output prod, ops::Mul(t, p, {.name = ctx.Name("mul")}));
  GG_ASSIGN_OR_RETURN(Output sum, SumLastAxis(prod, ctx.Name("Sum")));
  return ops::Neg(sum, {.name = ctx.Name("Neg")});
}

const LossKind& CosineSimilarityKind() {
  static const LossKind kind{.name = "cosine_similarity",
                             .class_name = "CosineSimilarity",
                             .order = 21,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(CosineSimilarityKind);

}  // namespace models_internal
}  // namespace graphgc
