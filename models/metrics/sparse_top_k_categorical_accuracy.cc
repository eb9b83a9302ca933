// sparse_top_k_categorical_accuracy: the class id is among the k largest
// predictions (k = 5 by default).
#include "models/metric_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output matches, InTopK(ctx, ctx.y_true));
  return MeanStats(ctx, matches);
}

const MetricKind& SparseTopKCategoricalAccuracyKind() {
  static const MetricKind kind{.name = "sparse_top_k_categorical_accuracy",
                               .class_name = "SparseTopKCategoricalAccuracy",
                               .aliases = {},
                               .order = 15,
                               .labels = MetricLabels::kSparse,
                               .takes_k = true,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(SparseTopKCategoricalAccuracyKind);

}  // namespace models_internal
}  // namespace graphgc
