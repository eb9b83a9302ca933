// categorical_accuracy: argmax(labels) == argmax(prediction).
#include "models/metric_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output matches, CategoricalMatches(ctx));
  return MeanStats(ctx, matches);
}

const MetricKind& CategoricalAccuracyKind() {
  static const MetricKind kind{.name = "categorical_accuracy",
                               .class_name = "CategoricalAccuracy",
                               .aliases = {},
                               .order = 12,
                               .labels = MetricLabels::kDense,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(CategoricalAccuracyKind);

}  // namespace models_internal
}  // namespace graphgc
