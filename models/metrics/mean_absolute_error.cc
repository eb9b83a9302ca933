// mean_absolute_error: the mean over samples of the loss's per-sample value.
#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return LossMeanStats(ctx, "mean_absolute_error");
}

const MetricKind& MeanAbsoluteErrorKind() {
  static const MetricKind kind{.name = "mean_absolute_error",
                               .class_name = "MeanAbsoluteError",
                               .aliases = {"mae", "MAE"},
                               .order = 21,
                               .labels = MetricLabels::kDense,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(MeanAbsoluteErrorKind);

}  // namespace models_internal
}  // namespace graphgc
