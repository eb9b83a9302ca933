// auc: the area under the ROC curve, as Keras's AUC (curve="ROC",
// summation_method="interpolation"): num_thresholds thresholds
// -1e-7, 1/(n-1), ..., (n-2)/(n-1), 1 + 1e-7; at each, the epoch's
// true-positive and false-positive rates; the trapezoid rule between
// neighbouring thresholds.
#include "models/metric_registry.h"

namespace graphgc {
namespace models_internal {
namespace {

constexpr double kEpsilon = 1e-7;

std::vector<float> Thresholds(int n) {
  std::vector<float> t;
  t.push_back(static_cast<float>(0.0 - kEpsilon));
  for (int i = 1; i < n - 1; ++i) {
    t.push_back(static_cast<float>(static_cast<double>(i) / (n - 1)));
  }
  t.push_back(static_cast<float>(1.0 + kEpsilon));
  return t;
}

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  return ConfusionStats(ctx, Thresholds(ctx.metric.num_thresholds));
}

double Result(const Metric& metric, absl::Span<const double> totals) {
  const size_t n = static_cast<size_t>(metric.num_thresholds);
  const Confusion c = ConfusionOf(totals, n);
  if (c.tp.size() != n) return 0;
  double area = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const double tpr0 = DivideNoNan(c.tp[i], c.tp[i] + c.fn[i]);
    const double tpr1 = DivideNoNan(c.tp[i + 1], c.tp[i + 1] + c.fn[i + 1]);
    const double fpr0 = DivideNoNan(c.fp[i], c.fp[i] + c.tn[i]);
    const double fpr1 = DivideNoNan(c.fp[i + 1], c.fp[i + 1] + c.tn[i + 1]);
    area += (fpr0 - fpr1) * (tpr0 + tpr1) / 2;
  }
  return area;
}

const MetricKind& AucKind() {
  static const MetricKind kind{.name = "auc",
                               .class_name = "AUC",
                               .order = 42,
                               .labels = MetricLabels::kDense,
                               .takes_num_thresholds = true,
                               .stats = Stats,
                               .result = Result};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(AucKind);

}  // namespace models_internal
}  // namespace graphgc
