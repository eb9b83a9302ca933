// recall: tp / (tp + fn) over the epoch's elements, a prediction above the
// threshold (0.5 by default) counting as positive and a nonzero label as
// true; 0 when there are none.
#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return ConfusionStats(ctx, {ctx.metric.threshold});
}

double Result(const Metric&, absl::Span<const double> totals) {
  const Confusion c = ConfusionOf(totals, 1);
  if (c.tp.empty()) return 0;
  return DivideNoNan(c.tp[0], c.tp[0] + c.fn[0]);
}

const MetricKind& RecallKind() {
  static const MetricKind kind{.name = "recall",
                               .class_name = "Recall",
                               .order = 41,
                               .labels = MetricLabels::kDense,
                               .takes_threshold = true,
                               .stats = Stats,
                               .result = Result};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(RecallKind);

}  // namespace models_internal
}  // namespace graphgc
