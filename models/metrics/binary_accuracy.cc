// binary_accuracy: the mean over units of label == (prediction > threshold).
#include "models/metric_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output matches, BinaryMatches(ctx));
  return MeanStats(ctx, matches);
}

const MetricKind& BinaryAccuracyKind() {
  static const MetricKind kind{.name = "binary_accuracy",
                               .class_name = "BinaryAccuracy",
                               .aliases = {},
                               .order = 11,
                               .labels = MetricLabels::kDense,
                               .takes_threshold = true,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(BinaryAccuracyKind);

}  // namespace models_internal
}  // namespace graphgc
