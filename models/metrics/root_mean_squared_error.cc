// root_mean_squared_error: sqrt of the mean over samples of
// mean(square(y_pred - y_true), axis=-1), summed over the epoch first.
#include <cmath>

#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return LossMeanStats(ctx, "mean_squared_error");
}

double Result(const Metric& metric, absl::Span<const double> totals) {
  return std::sqrt(MeanResult(metric, totals));
}

const MetricKind& RootMeanSquaredErrorKind() {
  static const MetricKind kind{.name = "root_mean_squared_error",
                               .class_name = "RootMeanSquaredError",
                               .order = 24,
                               .labels = MetricLabels::kDense,
                               .stats = Stats,
                               .result = Result};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(RootMeanSquaredErrorKind);

}  // namespace models_internal
}  // namespace graphgc
