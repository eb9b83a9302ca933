// tests/testing/optimizer_steps.h
//
// An optimizer's update step by step against a reference written from its
// Keras formula: weights w of shape [2] minimising sum(w^2) / 2, so each
// step's gradient is w itself (read before the step's updates).
#ifndef GRAPHGC_TESTS_TESTING_OPTIMIZER_STEPS_H_
#define GRAPHGC_TESTS_TESTING_OPTIMIZER_STEPS_H_

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "gtest/gtest.h"
#include "models/optimizer_registry.h"
#include "models/optimizers.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace testing {

struct Quadratic {
  Graph g;
  Session session{g};
  Output w;
  Output grad;
  explicit Quadratic(std::vector<float> init) {
    w = *ops::VarHandleOp(g, DT_FLOAT, TensorShape({2}), {.name = "w"});
    Output value = *ops::Const(g, *Tensor::FromData<float>({2}, init));
    EXPECT_TRUE(session.Run({}, {}, {*ops::AssignVariableOp(w, value)}).ok());
    grad = *ops::ReadVariableOp(w, {.name = "grad"});
  }
  // The optimizer's step nodes for w; the gradient runs before them, as the
  // engine's loss does.
  absl::StatusOr<models_internal::UpdateNodes> Build(const Optimizer& o) {
    return models_internal::BuildUpdates(o, {w}, {TensorShape({2})}, {grad},
                                         {grad.handle()}, "m", session);
  }
  std::vector<float> Value() {
    Output read = *ops::ReadVariableOp(w);
    const Tensor t = (*session.Run({}, {read}))[0];
    return {t.data<float>()[0], t.data<float>()[1]};
  }
};

// `step(w, g, t)` updates one weight element as Keras does at step t (1 for
// the first), keeping its own slots; one reference per element.
using ReferenceStep = std::function<void(float& w, float g, int t)>;

inline void ExpectStepsMatch(const Optimizer& optimizer,
                             std::vector<ReferenceStep> reference,
                             std::vector<float> init = {10.f, -0.5f},
                             int steps = 6, float tolerance = 1e-5f) {
  Quadratic m(init);
  absl::StatusOr<models_internal::UpdateNodes> nodes = m.Build(optimizer);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  std::vector<float> want = init;
  for (int t = 1; t <= steps; ++t) {
    ASSERT_TRUE(m.session.Run({}, {}, {nodes->train_op}).ok());
    for (size_t i = 0; i < want.size(); ++i) reference[i](want[i], want[i], t);
    const std::vector<float> got = m.Value();
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got[i], want[i],
                  tolerance * std::max(1.f, std::fabs(want[i])))
          << "step " << t << " weight " << i;
    }
  }
}

}  // namespace testing
}  // namespace graphgc

#endif  // GRAPHGC_TESTS_TESTING_OPTIMIZER_STEPS_H_
