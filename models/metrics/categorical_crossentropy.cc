// categorical_crossentropy: the loss (from probabilities, no smoothing) as a
// mean metric.
#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return LossMeanStats(ctx, "categorical_crossentropy");
}

const MetricKind& CategoricalCrossentropyKind() {
  static const MetricKind kind{.name = "categorical_crossentropy",
                               .class_name = "CategoricalCrossentropy",
                               .aliases = {},
                               .order = 31,
                               .labels = MetricLabels::kDense,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(CategoricalCrossentropyKind);

}  // namespace models_internal
}  // namespace graphgc
