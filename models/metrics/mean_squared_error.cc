// mean_squared_error: the mean over samples of the loss's per-sample value.
#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return LossMeanStats(ctx, "mean_squared_error");
}

const MetricKind& MeanSquaredErrorKind() {
  static const MetricKind kind{.name = "mean_squared_error",
                               .class_name = "MeanSquaredError",
                               .aliases = {"mse", "MSE"},
                               .order = 20,
                               .labels = MetricLabels::kDense,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(MeanSquaredErrorKind);

}  // namespace models_internal
}  // namespace graphgc
