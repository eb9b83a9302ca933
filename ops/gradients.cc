#include "ops/gradients.h"

#include <string>

#include "ops/ops.h"

namespace graphgc {

absl::StatusOr<std::vector<Output>> AddGradients(
    const Output& y, const std::vector<Output>& xs,
    const std::optional<Output>& grad_y, absl::string_view name_scope) {
  const std::string scope(name_scope);
  GradientBuilders builders{
      .name_scope = scope,
      .ones_like =
          [&](const Output& x) {
            return ops::OnesLike(x, {.name = scope + "/OnesLike"});
          },
      .zeros_like =
          [&](const Output& x) {
            return ops::ZerosLike(x, {.name = scope + "/ZerosLike"});
          },
      .add_n =
          [&](const std::vector<Output>& parts) {
            return ops::AddN(parts, {.name = scope + "/AddN"});
          },
  };
  return AddGradientsWith(builders, y, xs, grad_y);
}

}  // namespace graphgc
