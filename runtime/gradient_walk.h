// runtime/gradient_walk.h
//
// The reverse-mode gradient walk, which needs no op library:
// AddGradientsWith builds d(sum y)/d(x) for each x in xs out of each op's
// gradient function (OpDef::gradient), with the three ops it needs besides
// them (the seed, zeros, the sum of fan-out) made by the caller's
// GradientBuilders. ops/gradients.h's AddGradients is this walk with //ops'
// builders; it documents the contract (which nodes are differentiated, the
// errors, what a failure leaves behind), and AddGradientsWith has the same
// one.
//
// Thread safety: as the graph's own building methods; the graph may be used
// and collected by other threads meanwhile (y and xs keep the path alive).
#ifndef GRAPHGC_RUNTIME_GRADIENT_WALK_H_
#define GRAPHGC_RUNTIME_GRADIENT_WALK_H_

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/graph.h"

namespace graphgc {

// GradientBuilders: the three ops the gradient walk needs besides the
// GradFns: the seed (OnesLike of y), the zero gradient of an x that y does
// not depend on (ZerosLike) and the sum of fan-out (AddN of 2+ Outputs of
// one dtype and shape). ops/gradients.h's AddGradients uses //ops'
// builders; code and tests that cannot depend on //ops pass their own.
struct GradientBuilders {
  std::string name_scope = "gradients";
  std::function<absl::StatusOr<Output>(const Output&)> ones_like;
  std::function<absl::StatusOr<Output>(const Output&)> zeros_like;
  std::function<absl::StatusOr<Output>(const std::vector<Output>&)> add_n;
};

// AddGradients (ops/gradients.h) with explicit builders; same contract.
absl::StatusOr<std::vector<Output>> AddGradientsWith(
    const GradientBuilders& builders, const Output& y,
    const std::vector<Output>& xs,
    const std::optional<Output>& grad_y = std::nullopt);

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_GRADIENT_WALK_H_
