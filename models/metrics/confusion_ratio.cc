// Precision's and Recall's statistics and value (confusion_ratio.h).
#include "models/metrics/confusion_ratio.h"

namespace graphgc {
namespace models_internal {

absl::StatusOr<std::vector<Output>> ConfusionRatioStats(
    const MetricContext& ctx) {
  return ConfusionStats(ctx, {ctx.metric.threshold});
}

double ConfusionRatioResult(ConfusionRatio ratio,
                            absl::Span<const double> totals) {
  const Confusion c = ConfusionOf(totals, 1);
  if (c.tp.empty()) return 0;
  const double other = ratio == ConfusionRatio::kPrecision ? c.fp[0] : c.fn[0];
  return DivideNoNan(c.tp[0], c.tp[0] + other);
}

}  // namespace models_internal
}  // namespace graphgc
