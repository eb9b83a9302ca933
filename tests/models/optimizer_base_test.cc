// The base optimizer's options (models/optimizer_base.h) as BuildUpdates
// applies them around every optimizer: clipping, decoupled weight decay and
// the step count, against keras/src/optimizers/base_optimizer.py.
#include "models/optimizer_base.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/keras_json.h"
#include "models/optimizer_registry.h"
#include "models/optimizers.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {
namespace {

// Two weights a (shape [2]) and b (shape [1]) whose gradients are fed.
struct TwoWeights {
  Graph g;
  Session session{g};
  Output a, b, ga, gb;
  TwoWeights() {
    a = Var("a", {1.f, 2.f});
    b = Var("b", {3.f});
    ga = *ops::Placeholder(g, DT_FLOAT, TensorShape({2}), {.name = "ga"});
    gb = *ops::Placeholder(g, DT_FLOAT, TensorShape({1}), {.name = "gb"});
  }
  Output Var(const std::string& name, std::vector<float> init) {
    const int64_t n = static_cast<int64_t>(init.size());
    Output v = *ops::VarHandleOp(g, DT_FLOAT, TensorShape({n}), {.name = name});
    Output value = *ops::Const(g, *Tensor::FromData<float>({n}, init));
    EXPECT_TRUE(session.Run({}, {}, {*ops::AssignVariableOp(v, value)}).ok());
    return v;
  }
  absl::StatusOr<UpdateNodes> Build(const Optimizer& o) {
    return BuildUpdates(o, {a, b}, {TensorShape({2}), TensorShape({1})},
                        {ga, gb}, {}, "m", session);
  }
  // One step with gradients (ga0, ga1) and gb0.
  void Step(const UpdateNodes& nodes, std::vector<float> grad_a, float grad_b) {
    ASSERT_TRUE(session
                    .Run({{ga, *Tensor::FromData<float>({2}, grad_a)},
                          {gb, *Tensor::FromData<float>({1}, {grad_b})}},
                         {}, {nodes.train_op})
                    .ok());
  }
  std::vector<float> Values() {
    std::vector<Tensor> t =
        *session.Run({}, {*ops::ReadVariableOp(a), *ops::ReadVariableOp(b)});
    return {t[0].data<float>()[0], t[0].data<float>()[1],
            t[1].data<float>()[0]};
  }
  int64_t Iterations(const UpdateNodes& nodes) {
    return (*session.Run({}, {*ops::ReadVariableOp(nodes.iterations)}))[0]
        .data<int64_t>()[0];
  }
};

// Plain SGD with lr 1: each weight moves by minus its (clipped) gradient.
Optimizer SGDWith(BaseOptimizerOptions base) {
  return optimizers::SGD({.learning_rate = 1.f}, base);
}

TEST(ClipGradients, ClipnormScalesEachGradientToTheNorm) {
  // Keras's test_clip_norm: clipnorm=1 on [100, 100] gives [2^-0.5, 2^-0.5].
  TwoWeights m;
  auto nodes = m.Build(SGDWith({.clipnorm = 1.f}));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  m.Step(*nodes, {100.f, 100.f}, 0.5f);
  const std::vector<float> w = m.Values();
  EXPECT_NEAR(w[0], 1.f - std::sqrt(0.5f), 1e-6f);
  EXPECT_NEAR(w[1], 2.f - std::sqrt(0.5f), 1e-6f);
  EXPECT_NEAR(w[2], 3.f - 0.5f, 1e-6f);  // under the norm: unchanged
}

TEST(ClipGradients, ClipvalueClampsEachElement) {
  TwoWeights m;
  auto nodes = m.Build(SGDWith({.clipvalue = 0.5f}));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  m.Step(*nodes, {2.f, -0.25f}, -3.f);
  const std::vector<float> w = m.Values();
  EXPECT_FLOAT_EQ(w[0], 1.f - 0.5f);
  EXPECT_FLOAT_EQ(w[1], 2.f + 0.25f);
  EXPECT_FLOAT_EQ(w[2], 3.f + 0.5f);
}

TEST(ClipGradients, GlobalClipnormScalesAllGradientsByTheJointNorm) {
  // Gradients (3, 0) and (4): global norm 5, clipped to 1 -> times 0.2.
  TwoWeights m;
  auto nodes = m.Build(SGDWith({.global_clipnorm = 1.f}));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  m.Step(*nodes, {3.f, 0.f}, 4.f);
  const std::vector<float> w = m.Values();
  EXPECT_NEAR(w[0], 1.f - 0.6f, 1e-6f);
  EXPECT_NEAR(w[1], 2.f, 1e-6f);
  EXPECT_NEAR(w[2], 3.f - 0.8f, 1e-6f);
}

TEST(ClipGradients, GlobalClipnormLeavesGradientsUnderTheNorm) {
  TwoWeights m;
  auto nodes = m.Build(SGDWith({.global_clipnorm = 10.f}));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  m.Step(*nodes, {3.f, 0.f}, 4.f);
  const std::vector<float> w = m.Values();
  EXPECT_NEAR(w[0], -2.f, 1e-6f);
  EXPECT_NEAR(w[2], -1.f, 1e-6f);
}

TEST(WeightDecay, DecaysBeforeTheUpdateAsKerasDoes) {
  // Keras: w -= w * weight_decay * lr, then the update w -= lr * g.
  TwoWeights m;
  auto nodes =
      m.Build(optimizers::SGD({.learning_rate = 0.1f}, {.weight_decay = 0.5f}));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  std::vector<float> want = {1.f, 2.f, 3.f};
  for (int step = 0; step < 3; ++step) {
    m.Step(*nodes, {1.f, -1.f}, 2.f);
    const float g[3] = {1.f, -1.f, 2.f};
    for (int i = 0; i < 3; ++i) {
      want[i] -= want[i] * 0.5f * 0.1f;
      want[i] -= 0.1f * g[i];
    }
  }
  const std::vector<float> w = m.Values();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(w[i], want[i], 1e-6f) << i;
}

TEST(WeightDecay, AppliesToEveryOptimizer) {
  // RMSprop with zero gradients moves nothing but the decay.
  TwoWeights m;
  auto nodes = m.Build(
      optimizers::RMSprop({.learning_rate = 0.1f}, {.weight_decay = 1.f}));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  m.Step(*nodes, {0.f, 0.f}, 0.f);
  EXPECT_NEAR(m.Values()[2], 3.f * 0.9f, 1e-6f);
}

TEST(Iterations, CountsTheStepsTaken) {
  TwoWeights m;
  auto nodes = m.Build(optimizers::Adam());
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(m.Iterations(*nodes), 0);
  for (int i = 0; i < 3; ++i) m.Step(*nodes, {1.f, 1.f}, 1.f);
  EXPECT_EQ(m.Iterations(*nodes), 3);
}

TEST(CheckBaseOptions, RefusesTwoClippingOptionsWithKerassMessage) {
  absl::Status s = CheckOptimizer(
      optimizers::SGD({}, {.clipnorm = 0.1f, .clipvalue = 0.1f}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Only one of `clipnorm`, `clipvalue` and "
                             "`global_clipnorm` can be set. Received: "
                             "clipnorm=0.1, clipvalue=0.1, "
                             "global_clipnorm=None"),
            std::string::npos)
      << s;
}

TEST(CheckBaseOptions, RefusesANegativeWeightDecayNamingTheOptimizer) {
  absl::Status s = CheckOptimizer(optimizers::Adam({}, {.weight_decay = -1.f}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Adam weight_decay must be finite and >= 0"),
            std::string::npos)
      << s;
}

TEST(BaseConfig, WritesOnlyTheOptionsSetAndReadsThemBack) {
  Json j = {{"config", Json::object()}};
  WriteBaseConfig({.weight_decay = 0.01f, .global_clipnorm = 2.f}, j);
  EXPECT_EQ(j["config"].size(), 2u);
  absl::StatusOr<BaseOptimizerOptions> back =
      ReadBaseConfig(ConfigObject(j["config"], "test"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, (BaseOptimizerOptions{.weight_decay = 0.01f,
                                         .global_clipnorm = 2.f}));
}

TEST(BaseConfig, ReadsKerassNullsAsUnset) {
  const Json j = {{"weight_decay", nullptr}, {"clipnorm", nullptr}};
  absl::StatusOr<BaseOptimizerOptions> back =
      ReadBaseConfig(ConfigObject(j, "test"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, BaseOptimizerOptions{});
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
