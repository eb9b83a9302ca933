// log_cosh_error: Keras's LogCoshError, the mean of the log_cosh loss's
// per-sample value.
#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return LossMeanStats(ctx, "log_cosh");
}

const MetricKind& LogCoshErrorKind() {
  static const MetricKind kind{.name = "log_cosh_error",
                               .class_name = "LogCoshError",
                               .default_name = "logcosh",
                               .aliases = {},
                               .order = 26,
                               .labels = MetricLabels::kDense,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(LogCoshErrorKind);

}  // namespace models_internal
}  // namespace graphgc
