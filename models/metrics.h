// models/metrics.h
//
// Metric: a metric of CompileOptions::configured_metrics, as Keras names
// them, with the options its Keras class takes. A value type; Compile
// builds its nodes through the metric registry (models/metric_registry.h),
// one file per metric under models/metrics/.
//
// `kind` is a registered metric's function name, class name or alias
// ("precision", "Precision", "mae", "sparse_top_k_categorical_accuracy").
// `name` is the logs' and History's key ("val_" + name for validation);
// empty: the Keras class's default name ("precision", "auc",
// "mean_absolute_error"). CompileOptions::metrics' strings are metrics of
// that kind named by the string itself, as Keras's compile names them.
#ifndef GRAPHGC_MODELS_METRICS_H_
#define GRAPHGC_MODELS_METRICS_H_

#include <string>

namespace graphgc {

struct Metric {
  std::string kind;
  std::string name;  // empty: the kind's default name
  // Top-k accuracies only.
  int k = 5;
  // Precision and Recall: the decision threshold (prediction > threshold);
  // BinaryAccuracy: prediction > threshold is class 1.
  float threshold = 0.5f;
  // AUC only: the thresholds of the ROC curve's Riemann sum.
  int num_thresholds = 200;
};

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_METRICS_H_
