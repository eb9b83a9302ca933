// precision: tp / (tp + fp) over the epoch's elements, a prediction above the
// threshold (0.5 by default) counting as positive and a nonzero label as
// true; 0 when there are none.
#include "models/metrics/confusion_ratio.h"

namespace graphgc {
namespace models_internal {
namespace {

const MetricKind& PrecisionKind() {
  static const MetricKind kind = ConfusionRatioKind<ConfusionRatio::kPrecision>(
      "precision", "Precision", 40);
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(PrecisionKind);

}  // namespace models_internal
}  // namespace graphgc
