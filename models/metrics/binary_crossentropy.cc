// binary_crossentropy: the loss (from probabilities, no smoothing) as a mean
// metric.
#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return LossMeanStats(ctx, "binary_crossentropy");
}

const MetricKind& BinaryCrossentropyKind() {
  static const MetricKind kind{.name = "binary_crossentropy",
                               .class_name = "BinaryCrossentropy",
                               .aliases = {"bce", "BCE"},
                               .order = 30,
                               .labels = MetricLabels::kDense,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(BinaryCrossentropyKind);

}  // namespace models_internal
}  // namespace graphgc
