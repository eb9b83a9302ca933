// tests/ops/kernel_test_util.h
//
// Test-only helpers that run op kernels without the executor:
//   KernelRunner::Run evaluates outputs by calling each needed node's OpDef
//     kernel in topological order (Graph::ReachableFrom), feeding
//     placeholders from `feeds` and passing producers' node resources, on a
//     1-thread Eigen::ThreadPoolDevice.
//   ExpectGradientMatches checks an op's GradFn against central differences
//     of L = sum(y * c) for a fixed random c, in double.
// Not thread-safe; one runner per test.
#ifndef GRAPHGC_TESTS_OPS_KERNEL_TEST_UTIL_H_
#define GRAPHGC_TESTS_OPS_KERNEL_TEST_UTIL_H_

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "ops/registry.h"
#include "runtime/graph.h"
#include "runtime/node_view.h"
#include "runtime/op_def.h"
#include "runtime/tensor.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace graphgc {
namespace testing {

using Feeds = std::vector<std::pair<Output, Tensor>>;

class KernelRunner {
 public:
  KernelRunner() : pool_(1), device_(&pool_, 1) {}

  // Runs every node that `fetches` and `targets` reach; returns the fetched
  // tensors. The first kernel error is returned as is.
  absl::StatusOr<std::vector<Tensor>> Run(
      const std::vector<Output>& fetches, const Feeds& feeds = {},
      const std::vector<Output>& targets = {}) {
    std::vector<NodeHandle> roots;
    for (const Output& o : fetches) roots.push_back(o.handle());
    for (const Output& o : targets) roots.push_back(o.handle());
    if (roots.empty()) return std::vector<Tensor>{};
    Graph& g = *roots[0].graph();
    absl::StatusOr<std::vector<NodeHandle>> order = g.ReachableFrom(roots);
    if (!order.ok()) return order.status();
    absl::flat_hash_map<Output, Tensor> values;
    for (const auto& [out, t] : feeds) values[out] = t;
    for (const NodeHandle& h : *order) {
      const NodeView node(h);
      bool fed = false;
      for (size_t i = 0; i < node.output_types().size(); ++i) {
        fed |= values.contains(Output(h, static_cast<int>(i)));
      }
      if (fed) continue;
      std::vector<Tensor> inputs;
      std::vector<NodeResource*> resources;
      for (size_t k = 0; k < node.inputs().size(); ++k) {
        const NodeInput& in = node.inputs()[k];
        absl::StatusOr<NodeHandle> p = g.HandleFor(in.node);
        if (!p.ok()) return p.status();
        inputs.push_back(values[Output(*p, in.index)]);
        resources.push_back(node.input(k).resource());
      }
      if (node.op_def() == nullptr || !node.op_def()->kernel) {
        return absl::InternalError("node " + node.name() + " has no kernel");
      }
      std::vector<const Tensor*> input_ptrs;
      for (const Tensor& t : inputs) input_ptrs.push_back(&t);
      OpKernelContext ctx(node, input_ptrs, resources, &device_, ++step_);
      absl::Status s = node.op_def()->kernel(ctx);
      if (!s.ok()) return s;
      for (size_t i = 0; i < ctx.outputs().size(); ++i) {
        values[Output(h, static_cast<int>(i))] = ctx.outputs()[i];
      }
    }
    std::vector<Tensor> out;
    for (const Output& o : fetches) out.push_back(values[o]);
    return out;
  }

  // Convenience: one fetch.
  absl::StatusOr<Tensor> Run1(const Output& fetch, const Feeds& feeds = {}) {
    absl::StatusOr<std::vector<Tensor>> r = Run({fetch}, feeds);
    if (!r.ok()) return r.status();
    return (*r)[0];
  }

 private:
  Eigen::ThreadPool pool_;
  Eigen::ThreadPoolDevice device_;
  int64_t step_ = 0;
};

inline Tensor F(const TensorShape& shape, std::vector<float> v) {
  return Tensor::FromData<float>(shape, v).value();
}
inline Tensor I32(const TensorShape& shape, std::vector<int32_t> v) {
  return Tensor::FromData<int32_t>(shape, v).value();
}
inline std::vector<float> Values(const Tensor& t) {
  auto d = t.data<float>();
  return std::vector<float>(d.begin(), d.end());
}
// A float tensor of `shape` with values uniform in [lo, hi), fixed seed.
inline Tensor RandomTensor(const TensorShape& shape, uint32_t seed,
                           float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(shape.num_elements());
  for (float& x : v) x = u(rng);
  return F(shape, v);
}

// Checks the GradFn of `y`'s node for data input `input_index`, which must
// be a Placeholder fed in `feeds`, against central differences. `eps` is the
// step; the check is |analytic - numeric| <= tol * max(1, |numeric|).
inline void ExpectGradientMatches(const Output& y, const Feeds& feeds,
                                  int input_index, double eps = 1e-3,
                                  double tol = 1e-2, uint32_t seed = 7) {
  Graph& g = *y.graph();
  KernelRunner runner;
  absl::StatusOr<Tensor> y0 = runner.Run1(y, feeds);
  ASSERT_TRUE(y0.ok()) << y0.status();
  const Tensor c = RandomTensor(y0->shape(), seed);
  NodeInfo info = g.Describe(y.handle()).value();
  GradContext ctx;
  ctx.node = info;
  for (size_t i = 0; i < info.output_types.size(); ++i) {
    ctx.outputs.emplace_back(y.handle(), static_cast<int>(i));
    ctx.grad_outputs.push_back(std::nullopt);
  }
  ctx.grad_outputs[y.index()] = ops::Const(g, c).value();
  ASSERT_TRUE(info.op_def->gradient) << info.op << " has no gradient";
  absl::StatusOr<std::vector<std::optional<Output>>> grads =
      info.op_def->gradient(ctx);
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), info.inputs.size());
  ASSERT_TRUE((*grads)[input_index].has_value())
      << info.op << ": no gradient for input " << input_index;
  absl::StatusOr<Tensor> analytic = runner.Run1(*(*grads)[input_index], feeds);
  ASSERT_TRUE(analytic.ok()) << analytic.status();

  const Output& x = info.inputs[input_index];
  int feed_index = -1;
  for (size_t i = 0; i < feeds.size(); ++i) {
    if (feeds[i].first == x) feed_index = static_cast<int>(i);
  }
  ASSERT_GE(feed_index, 0) << "input " << input_index << " is not fed";
  const Tensor x0 = feeds[feed_index].second;
  ASSERT_EQ(analytic->shape(), x0.shape()) << info.op;
  auto loss = [&](const Tensor& xv) {
    Feeds f = feeds;
    f[feed_index].second = xv;
    Tensor yv = runner.Run1(y, f).value();
    double l = 0;
    for (int64_t k = 0; k < yv.num_elements(); ++k) {
      l += static_cast<double>(yv.data<float>()[k]) * c.data<float>()[k];
    }
    return l;
  };
  std::vector<float> base = Values(x0);
  for (int64_t j = 0; j < x0.num_elements(); ++j) {
    std::vector<float> plus = base, minus = base;
    plus[j] += static_cast<float>(eps);
    minus[j] -= static_cast<float>(eps);
    const double numeric =
        (loss(F(x0.shape(), plus)) - loss(F(x0.shape(), minus))) /
        (static_cast<double>(plus[j]) - minus[j]);
    const double a = analytic->data<float>()[j];
    EXPECT_NEAR(a, numeric, tol * std::max(1.0, std::abs(numeric)))
        << info.op << " input " << input_index << " element " << j;
  }
}

}  // namespace testing
}  // namespace graphgc

#endif  // GRAPHGC_TESTS_OPS_KERNEL_TEST_UTIL_H_
