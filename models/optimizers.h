// models/optimizers.h
//
// Optimizer: how a model updates its weights, with Keras' semantics and
// defaults. A value type; Sequential::Compile builds the update nodes and
// the optimizer's own variables (Adam's m and v, SGD's velocity), which
// belong to that model.
//
// Adam: lr 0.001, beta_1 0.9, beta_2 0.999, epsilon 1e-7; step t uses the
// bias-corrected step size lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), as
// TensorFlow's ResourceApplyAdam. SGD: plain, with momentum (velocity =
// momentum * velocity - lr * g; w += velocity) and Nesterov (w += momentum *
// velocity - lr * g).
#ifndef GRAPHGC_MODELS_OPTIMIZERS_H_
#define GRAPHGC_MODELS_OPTIMIZERS_H_

#include <string>
#include <variant>

namespace graphgc {

struct SGDOptions {
  float learning_rate = 0.01f;
  float momentum = 0.f;
  bool nesterov = false;
};

struct AdamOptions {
  float learning_rate = 0.001f;
  float beta_1 = 0.9f;
  float beta_2 = 0.999f;
  float epsilon = 1e-7f;
};

// An optimizer and its options: none (a default-constructed Optimizer, which
// Compile refuses), SGD or Adam. The options of the one kind it is are all
// it holds, so it cannot carry another kind's.
struct Optimizer {
  std::variant<std::monostate, SGDOptions, AdamOptions> options;

  std::string name() const;  // "SGD", "Adam"; "none" when unset
};

namespace optimizers {
Optimizer SGD(SGDOptions options = {});
Optimizer Adam(AdamOptions options = {});
}  // namespace optimizers

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_OPTIMIZERS_H_
