// ops/gradients.h
//
// AddGradients: builds the reverse-mode subgraph of d(sum y)/d(x) for each
// x in xs, out of each op's gradient function (OpDef::gradient), and returns
// one Output per x.
//
// Only the nodes on a data path from an x to y are differentiated; branches
// that reach no x get no gradient nodes. A node reached from several
// consumers gets their gradients summed with AddN. An x that does not
// influence y gets ZerosLike(x). A node without a gradient function on a
// path from y to an x is refused when a gradient reaches it, with a status
// naming it: "AddGradients: no gradient for ArgMax 'argmax_1' on the path
// from 'loss' to 'w'" (one whose consumers' GradFns give it no gradient, a
// shape or an integer input, is fine, as in TensorFlow). On any error the
// graph gains nothing reachable: the nodes built so far are held only by
// local handles, which are dropped, so after the next collection
// num_nodes() is what it was.
//
// Thread safety: as the graph's own building methods; the graph may be used
// and collected by other threads meanwhile (y and xs keep the path alive).
//
// Example:
//   std::vector<Output> grads = AddGradients(loss, {w, b}).value();
//   std::vector<Tensor> g = session.Run({{x, xt}}, grads).value();
#ifndef GRAPHGC_OPS_GRADIENTS_H_
#define GRAPHGC_OPS_GRADIENTS_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/gradient_walk.h"
#include "runtime/graph.h"

namespace graphgc {

// AddGradients returns, for each x, the gradient of the sum of y's elements
// (or of sum(y * grad_y), when grad_y is given: the gradient flowing into
// y, of y's dtype and shape) with respect to x. y, xs and grad_y must be
// valid Outputs of one graph.
// Gradient nodes are named "<name_scope>/<forward node>_grad/...": a model
// passes its own scope ("sequential_3/gradients") so its nodes stay together.
absl::StatusOr<std::vector<Output>> AddGradients(
    const Output& y, const std::vector<Output>& xs,
    const std::optional<Output>& grad_y = std::nullopt,
    absl::string_view name_scope = "gradients");

}  // namespace graphgc

#endif  // GRAPHGC_OPS_GRADIENTS_H_
