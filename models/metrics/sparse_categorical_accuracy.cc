// sparse_categorical_accuracy: class id == argmax(prediction).
#include "models/metric_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output matches, SparseCategoricalMatches(ctx));
  return MeanStats(ctx, matches);
}

const MetricKind& SparseCategoricalAccuracyKind() {
  static const MetricKind kind{.name = "sparse_categorical_accuracy",
                               .class_name = "SparseCategoricalAccuracy",
                               .aliases = {},
                               .order = 13,
                               .labels = MetricLabels::kSparse,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(SparseCategoricalAccuracyKind);

}  // namespace models_internal
}  // namespace graphgc
