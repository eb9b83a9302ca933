// AddGradients with //ops' builders. Separate from gradients.cc so that the
// gradient walk itself (AddGradientsWith) needs no op library.
#include "ops/ops.h"
#include "runtime/gradients.h"

namespace graphgc {

absl::StatusOr<std::vector<Output>> AddGradients(
    const Output& y, const std::vector<Output>& xs,
    const std::optional<Output>& grad_y) {
  static const GradientBuilders* const kBuilders = new GradientBuilders{
      .ones_like =
          [](const Output& x) {
            return ops::OnesLike(x, {.name = "gradients/OnesLike"});
          },
      .zeros_like =
          [](const Output& x) {
            return ops::ZerosLike(x, {.name = "gradients/ZerosLike"});
          },
      .add_n =
          [](const std::vector<Output>& parts) {
            return ops::AddN(parts, {.name = "gradients/AddN"});
          },
  };
  return AddGradientsWith(*kBuilders, y, xs, grad_y);
}

}  // namespace graphgc
