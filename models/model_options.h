// models/model_options.h
//
// What a model is made, compiled and fit with (SequentialOptions,
// CompileOptions, FitOptions) and what a fit returns (History): the option
// types of models/sequential.h, below the training engine that reads them
// (models/engine.h, models/fit.h) so that it never includes the model
// class above it. Include models/sequential.h to use them.
#ifndef GRAPHGC_MODELS_MODEL_OPTIONS_H_
#define GRAPHGC_MODELS_MODEL_OPTIONS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/callbacks/callback.h"
#include "models/losses.h"
#include "models/metrics.h"
#include "models/optimizers.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {

struct SequentialOptions {
  std::string name;        // empty: "sequential", uniqued in the graph
  Graph* graph = nullptr;  // nullptr: Graph::Default()
  // Threads each kernel may split across: 0 is the process's count when
  // the model is created (IntraOpThreads(), runtime/intra_op_threads.h:
  // every core unless SetIntraOpThreads said otherwise), 1 exactly one.
  int intra_op_threads = 0;
};

struct CompileOptions {
  Optimizer optimizer;
  Loss loss;
  // Metric names as Keras's compile takes them ("accuracy", "mae",
  // "precision", "AUC", ...; models/metric_registry.h lists them), each
  // logged under the name as given.
  std::vector<std::string> metrics;
  // Metrics with options or a name of their own (models/metrics.h),
  // computed and logged after `metrics`.
  std::vector<Metric> configured_metrics;
  // Models of several outputs, in output order (Keras's list forms).
  // `losses`: one per output, an unset Loss (kind "") for an output not
  // trained on; empty: `loss` for every output. `loss_weights`: empty, 1
  // for each. The total loss is the sum of each trained output's loss times
  // its weight. `output_metrics`: one list per output of metric names;
  // empty: `metrics` for every output. `configured_metrics` apply to every
  // output.
  std::vector<Loss> losses;
  std::vector<double> loss_weights;
  std::vector<std::vector<std::string>> output_metrics;
};

struct FitOptions {
  int epochs = 1;
  int batch_size = 32;
  bool shuffle = true;
  int verbose = 1;  // 0 silent, 1 progress bar, 2 one line per epoch
  std::vector<std::shared_ptr<Callback>> callbacks;
  std::optional<std::pair<Tensor, Tensor>> validation_data;
  uint64_t seed = 0;
  // Keras's validation_split: the samples of x and y from row
  // floor(n * (1 - validation_split)) on, taken before shuffling, are held
  // out of training and validated on after each epoch as validation_data
  // would be (validation_data, when given, wins and this is unused).
  // 0: no split; else in (0, 1) and leaving a sample on each side.
  // A double, as Keras's Python float, so the split row is Keras's.
  double validation_split = 0.0;
  // validation_data for the list forms of Functional::Fit (one tensor per
  // input, one per output); when set, validation_data is unused.
  std::optional<std::pair<std::vector<Tensor>, std::vector<Tensor>>>
      validation_lists;
  // Keras's initial_epoch: epochs run from this number to `epochs` - 1, and
  // the history, the callbacks and "Epoch N/M" count from it.
  int initial_epoch = 0;
  // Keras's steps_per_epoch: at most this many batches an epoch, the next
  // epoch continuing the same pass over x; a pass that runs out mid-epoch
  // ends that epoch early (History::warnings has Keras's warning) and the
  // next epoch starts a new pass. 0 (Keras's None): one pass per epoch.
  int64_t steps_per_epoch = 0;
  // The same over the validation data (0: all of it), batches of
  // validation_batch_size (0: batch_size).
  int64_t validation_steps = 0;
  int validation_batch_size = 0;
  // Validates after every validation_freq-th epoch (epoch + 1 divisible by
  // it); with validation_epochs non-empty, after the 1-based epochs it
  // lists instead (Keras's list form).
  int validation_freq = 1;
  std::vector<int> validation_epochs;
  // Keras's sample_weight: float [samples], each sample's loss scaled by
  // its weight; class_weight: class id -> weight, turned into per-sample
  // weights from y as Keras does (argmax of one-hot rows, rounded ids).
  // Not both. The weights of validation_split's rows weigh its validation;
  // validation_sample_weight weighs validation_data.
  std::optional<Tensor> sample_weight;
  std::map<int64_t, float> class_weight;
  std::optional<Tensor> validation_sample_weight;
};

// Per-epoch values of a fit: history["loss"][epoch], each metric's name
// ("accuracy", "mae", "precision"), "val_loss", "val_" + each metric's.
struct History {
  std::map<std::string, std::vector<float>> history;
  std::vector<int> epoch;
  // Keras's warnings of the fit (running out of data), each once.
  std::vector<std::string> warnings;

  // The values of one key (empty when absent).
  const std::vector<float>& values(const std::string& key) const;
};

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_MODEL_OPTIONS_H_
