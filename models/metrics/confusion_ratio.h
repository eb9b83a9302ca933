// models/metrics/confusion_ratio.h
//
// What Precision and Recall share: tp / (tp + fp) or tp / (tp + fn) over
// the epoch's elements at the metric's threshold (0.5 by default), a
// prediction above it counting as positive and a nonzero label as true;
// 0 when the denominator is. Each metric's own file registers its kind.
#ifndef GRAPHGC_MODELS_METRICS_CONFUSION_RATIO_H_
#define GRAPHGC_MODELS_METRICS_CONFUSION_RATIO_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "models/metric_registry.h"
#include "runtime/graph.h"

namespace graphgc {
namespace models_internal {

// The count tp is set against: false positives (precision) or false
// negatives (recall).
enum class ConfusionRatio { kPrecision, kRecall };

// ConfusionStats at the metric's one threshold.
absl::StatusOr<std::vector<Output>> ConfusionRatioStats(
    const MetricContext& ctx);

// The ratio of ConfusionRatioStats' summed statistics.
double ConfusionRatioResult(ConfusionRatio ratio,
                            absl::Span<const double> totals);

// The kind of a confusion ratio metric, taking a threshold and dense
// labels.
template <ConfusionRatio kRatio>
MetricKind ConfusionRatioKind(std::string name, std::string class_name,
                              int order) {
  return MetricKind{
      .name = std::move(name),
      .class_name = std::move(class_name),
      .order = order,
      .labels = MetricLabels::kDense,
      .takes_threshold = true,
      .stats = ConfusionRatioStats,
      .result = [](const Metric&, absl::Span<const double> totals) {
        return ConfusionRatioResult(kRatio, totals);
      }};
}

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_METRICS_CONFUSION_RATIO_H_
