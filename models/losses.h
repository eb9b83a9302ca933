// models/losses.h
//
// Loss: which loss a model minimises, as Keras names them. A value type;
// Sequential::Compile builds the loss's nodes through the loss registry
// (models/loss_registry.h), one file per loss under models/losses/.
//
// `kind` is the Keras function name of a registered loss
// ("sparse_categorical_crossentropy", "mean_absolute_error", ...);
// losses::Get also takes Keras's class names and aliases ("mae", "MAE",
// "MeanAbsoluteError"). Each loss takes the options its Keras class has:
// `from_logits` and `label_smoothing` (the cross-entropies), `delta`
// (huber); Compile refuses an option a loss does not take. `reduction` is
// "sum_over_batch_size" (the mean of the per-sample losses; "mean" is the
// same) or "sum".
//
// SparseCategoricalCrossentropy: class ids in [0, classes), as integers or
// integral floats. From probabilities (the default, for a softmax output)
// it does what Keras does: with a softmax output it uses the softmax's
// logits directly (the numerically stable path); otherwise
// log(clip(p, 1e-7, 1 - 1e-7)) fed to a softmax cross-entropy. The other
// losses take float targets of the output's shape.
#ifndef GRAPHGC_MODELS_LOSSES_H_
#define GRAPHGC_MODELS_LOSSES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace graphgc {

struct CrossentropyOptions {
  bool from_logits = false;
  // Binary and categorical cross-entropy only.
  float label_smoothing = 0.f;
  std::string reduction = "sum_over_batch_size";
};

struct ReductionOptions {
  std::string reduction = "sum_over_batch_size";
};

// Every option any loss takes, for losses::Get.
struct LossOptions {
  bool from_logits = false;
  float label_smoothing = 0.f;
  float delta = 1.f;
  std::string reduction = "sum_over_batch_size";
};

struct Loss {
  // The Keras function name of a registered loss; empty when unset.
  std::string kind;
  bool from_logits = false;
  float label_smoothing = 0.f;
  float delta = 1.f;
  std::string reduction = "sum_over_batch_size";

  // `kind`, or "none" when unset.
  std::string name() const;
};

namespace losses {
Loss SparseCategoricalCrossentropy(CrossentropyOptions options = {});
Loss CategoricalCrossentropy(CrossentropyOptions options = {});
Loss BinaryCrossentropy(CrossentropyOptions options = {});
Loss MeanSquaredError(ReductionOptions options = {});
// The registered loss named `identifier` (a Keras function name, class name
// or alias) with `options`; InvalidArgument naming the known losses, or
// the option the loss does not take.
absl::StatusOr<Loss> Get(const std::string& identifier,
                         LossOptions options = {});

// A registered loss as Keras names it and the options it takes (the
// Python classes are generated from these).
struct LossInfo {
  std::string name;         // "huber"
  std::string class_name;   // "Huber"
  std::string object_name;  // the Keras object's default name: "huber_loss"
  std::vector<std::string> aliases;
  bool takes_from_logits = false;
  bool takes_label_smoothing = false;
  bool takes_delta = false;
};
std::vector<LossInfo> RegisteredLosses();
}  // namespace losses

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LOSSES_H_
