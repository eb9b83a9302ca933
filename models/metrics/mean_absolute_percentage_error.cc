// mean_absolute_percentage_error: the mean over samples of the loss's
// per-sample value.
#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return LossMeanStats(ctx, "mean_absolute_percentage_error");
}

const MetricKind& MeanAbsolutePercentageErrorKind() {
  static const MetricKind kind{.name = "mean_absolute_percentage_error",
                               .class_name = "MeanAbsolutePercentageError",
                               .aliases = {"mape", "MAPE"},
                               .order = 22,
                               .labels = MetricLabels::kDense,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(MeanAbsolutePercentageErrorKind);

}  // namespace models_internal
}  // namespace graphgc
