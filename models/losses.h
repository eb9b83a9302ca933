// models/losses.h
//
// Loss: which loss a model minimises, as Keras names them. A value type;
// Sequential::Compile builds the loss's nodes.
//
// SparseCategoricalCrossentropy: integer labels in [0, classes). From
// probabilities (the default, for a softmax output) it does what Keras
// does: with a softmax output it uses the softmax's logits directly (the
// numerically stable path); otherwise log(clip(p, 1e-7, 1 - 1e-7)) fed to a
// softmax cross-entropy. CategoricalCrossentropy: one-hot (or soft) float
// labels. MeanSquaredError: float targets. All reduce by the mean over the
// batch ("sum_over_batch_size").
#ifndef GRAPHGC_MODELS_LOSSES_H_
#define GRAPHGC_MODELS_LOSSES_H_

#include <string>

namespace graphgc {

struct CrossentropyOptions {
  bool from_logits = false;
};

struct Loss {
  enum class Kind {
    kNone,
    kSparseCategoricalCrossentropy,
    kCategoricalCrossentropy,
    kMeanSquaredError
  };
  Kind kind = Kind::kNone;
  bool from_logits = false;

  // "sparse_categorical_crossentropy", ...; "none" when unset.
  std::string name() const;
};

namespace losses {
Loss SparseCategoricalCrossentropy(CrossentropyOptions options = {});
Loss CategoricalCrossentropy(CrossentropyOptions options = {});
Loss MeanSquaredError();
}  // namespace losses

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LOSSES_H_
