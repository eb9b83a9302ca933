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
// increment and w -= m, else w -= increment. AdamW (Adam with decoupled
// weight decay 0.004), Adam's amsgrad, Adagrad, Adamax, Nadam, Adadelta and
// Lion follow keras/src/optimizers/<name>.py, each in its file.
//
// Every optimizer also takes Keras's base options (BaseOptimizerOptions):
// gradients are clipped first (clipnorm per weight, clipvalue elementwise or
// global_clipnorm over all weights; at most one of them), then each weight
// decays by w -= w * weight_decay * lr, then the optimizer's update runs and
// the step count `iterations` (0 at the first step) advances.
//
// With a learning_rate_schedule (models/learning_rate_schedule.h, Keras's
// keras.optimizers.schedules), Fit sets the rate before every step to the
// schedule's rate at `iterations`, and the kind's learning_rate field is
// unused.
#ifndef GRAPHGC_MODELS_OPTIMIZERS_H_
#define GRAPHGC_MODELS_OPTIMIZERS_H_

#include <optional>
#include <string>
#include <variant>

#include "models/learning_rate_schedule.h"

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
  bool amsgrad = false;  // keeps the maximum of v and divides by it
};

// Adam with decoupled weight decay (its default 0.004; set
// BaseOptimizerOptions::weight_decay to change it).
struct AdamWOptions {
  float learning_rate = 0.001f;
  float beta_1 = 0.9f;
  float beta_2 = 0.999f;
  float epsilon = 1e-7f;
  bool amsgrad = false;
};

struct AdagradOptions {
  float learning_rate = 0.001f;
  float initial_accumulator_value = 0.1f;
  float epsilon = 1e-7f;
};

struct AdamaxOptions {
  float learning_rate = 0.001f;
  float beta_1 = 0.9f;
  float beta_2 = 0.999f;
  float epsilon = 1e-7f;
};

struct NadamOptions {
  float learning_rate = 0.001f;
  float beta_1 = 0.9f;
  float beta_2 = 0.999f;
  float epsilon = 1e-7f;
};

struct AdadeltaOptions {
  float learning_rate = 0.001f;
  float rho = 0.95f;
  float epsilon = 1e-7f;
};

struct LionOptions {
  float learning_rate = 0.001f;
  float beta_1 = 0.9f;
  float beta_2 = 0.99f;
};

// Keras's base optimizer arguments; unset is Keras's None.
struct BaseOptimizerOptions {
  std::optional<float> weight_decay;     // AdamW: 0.004 when unset
  std::optional<float> clipnorm;         // each gradient's L2 norm at most
  std::optional<float> clipvalue;        // each element in [-v, v]
  std::optional<float> global_clipnorm;  // all gradients' joint L2 norm

  bool operator==(const BaseOptimizerOptions&) const = default;
};

struct RMSpropOptions {
  float learning_rate = 0.001f;
  float rho = 0.9f;
  float momentum = 0.f;
  float epsilon = 1e-7f;
  bool centered = false;
};

// An optimizer and its options: none (a default-constructed Optimizer, which
// Compile refuses), or one kind's options, so it cannot carry another
// kind's; and the base options every kind takes.
struct Optimizer {
  std::variant<std::monostate, SGDOptions, AdamOptions, RMSpropOptions,
               AdamWOptions, AdagradOptions, AdamaxOptions, NadamOptions,
               AdadeltaOptions, LionOptions>
      options;
  BaseOptimizerOptions base;
  // Keras's learning_rate given as a LearningRateSchedule.
  std::optional<LearningRateSchedule> learning_rate_schedule;

  std::string name() const;  // "SGD", "Adam", ...; "none" when unset
};

namespace optimizers {
Optimizer SGD(SGDOptions options = {}, BaseOptimizerOptions base = {});
Optimizer Adam(AdamOptions options = {}, BaseOptimizerOptions base = {});
Optimizer RMSprop(RMSpropOptions options = {}, BaseOptimizerOptions base = {});
Optimizer AdamW(AdamWOptions options = {}, BaseOptimizerOptions base = {});
Optimizer Adagrad(AdagradOptions options = {}, BaseOptimizerOptions base = {});
Optimizer Adamax(AdamaxOptions options = {}, BaseOptimizerOptions base = {});
Optimizer Nadam(NadamOptions options = {}, BaseOptimizerOptions base = {});
Optimizer Adadelta(AdadeltaOptions options = {},
                   BaseOptimizerOptions base = {});
Optimizer Lion(LionOptions options = {}, BaseOptimizerOptions base = {});
}  // namespace optimizers

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_OPTIMIZERS_H_
