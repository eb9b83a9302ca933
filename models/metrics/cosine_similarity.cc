// cosine_similarity: sum(l2_normalize(y_true) * l2_normalize(y_pred)) over
// the last axis, the cosine_similarity loss's per-sample value negated.
#include "models/metric_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output loss, LossPerSample(ctx, "cosine_similarity"));
  GG_ASSIGN_OR_RETURN(Output value,
                      ops::Neg(loss, {.name = ctx.Name("similarity")}));
  return MeanStats(ctx, value);
}

const MetricKind& CosineSimilarityKind() {
  static const MetricKind kind{.name = "cosine_similarity",
                               .class_name = "CosineSimilarity",
                               .order = 25,
                               .labels = MetricLabels::kDense,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(CosineSimilarityKind);

}  // namespace models_internal
}  // namespace graphgc
