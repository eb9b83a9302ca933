// sparse_categorical_crossentropy: the loss (from probabilities) as a mean
// metric.
#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return LossMeanStats(ctx, "sparse_categorical_crossentropy");
}

const MetricKind& SparseCategoricalCrossentropyKind() {
  static const MetricKind kind{.name = "sparse_categorical_crossentropy",
                               .class_name = "SparseCategoricalCrossentropy",
                               .aliases = {},
                               .order = 32,
                               .labels = MetricLabels::kSparse,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(SparseCategoricalCrossentropyKind);

}  // namespace models_internal
}  // namespace graphgc
