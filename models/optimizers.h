// models/optimizers.h
//
// Optimizer: how a model updates its weights, with Keras' semantics and
// defaults. A value type; Sequential::Compile builds the update nodes and
// the optimizer's own variables (Adam's m and v, SGD's velocity, RMSprop's
// velocity), which belong to that model. Each optimizer's update is defined
// by its file under models/optimizers/ (models/optimizer_registry.h).
//
// Adam: lr 0.001, beta_1 0.9, beta_2 0.999, epsilon 1e-7; step t uses the
// bias-corrected step size lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), as
// TensorFlow's ResourceApplyAdam. SGD: plain, with momentum (velocity =
// momentum * velocity - lr * g; w += velocity) and Nesterov (w += momentum *
// velocity - lr * g). RMSprop: lr 0.001, rho 0.9, momentum 0, epsilon 1e-7,
// not centered; Keras 3's update: velocity = rho * velocity + (1 - rho) *
// g^2 (centered: also average_grad = rho * average_grad + (1 - rho) * g,
// and velocity - average_grad^2 in place of velocity below); increment = lr
// * g / sqrt(velocity + epsilon); with momentum, m = momentum * m +
// increment and w -= m, else w -= increment.
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

struct RMSpropOptions {
  float learning_rate = 0.001f;
  float rho = 0.9f;
  float momentum = 0.f;
  float epsilon = 1e-7f;
  bool centered = false;
};

// An optimizer and its options: none (a default-constructed Optimizer, which
// Compile refuses), SGD, Adam or RMSprop. The options of the one kind it is are
// all it holds, so it cannot carry another kind's.
struct Optimizer {
  std::variant<std::monostate, SGDOptions, AdamOptions, RMSpropOptions> options;

  std::string name() const;  // "SGD", "Adam", "RMSprop"; "none" when unset
};

namespace optimizers {
Optimizer SGD(SGDOptions options = {});
Optimizer Adam(AdamOptions options = {});
Optimizer RMSprop(RMSpropOptions options = {});
}  // namespace optimizers

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_OPTIMIZERS_H_
