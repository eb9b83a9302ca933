// top_k_categorical_accuracy: argmax(labels) is among the k largest
// predictions (k = 5 by default).
#include "models/metric_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output ids, ops::ArgMax(ctx.y_true, 1,
                                              {.name = ctx.Name("ArgMax"),
                                               .output_type = DT_INT32}));
  GG_ASSIGN_OR_RETURN(Output matches, InTopK(ctx, ids));
  return MeanStats(ctx, matches);
}

const MetricKind& TopKCategoricalAccuracyKind() {
  static const MetricKind kind{.name = "top_k_categorical_accuracy",
                               .class_name = "TopKCategoricalAccuracy",
                               .order = 14,
                               .labels = MetricLabels::kDense,
                               .takes_k = true,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(TopKCategoricalAccuracyKind);

}  // namespace models_internal
}  // namespace graphgc
