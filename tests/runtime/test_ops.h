// tests/runtime/test_ops.h
//
// Small test-only ops for the executor and gradient tests, built straight
// through Graph::AddNode so these tests need nothing above the graph. Each
// TestOps object owns its OpDefs (it must outlive the graph's nodes that
// point at them: declare it before the Graph) and counts kernel runs per op
// type.
//
// All values are float. Ops: "TestConst" (attr "value"), "Placeholder"
// (no kernel: must be fed), "Identity", "Add", "Mul", "Square", "Sum" (of
// all elements, to a scalar), "OnesLike", "ZerosLike", "AddN", "ArgMaxish"
// (no gradient), "Pick" (returns input 0; input 1 gets no gradient), "Fail"
// (kernel error), "Wrong" (kernel output of the wrong dtype), "Block" (identity
// that waits until Release()), "Var" (DT_RESOURCE output holding a tensor) and
// "Read" (reads its input's resource), "NoOp".
#ifndef GRAPHGC_TESTS_RUNTIME_TEST_OPS_H_
#define GRAPHGC_TESTS_RUNTIME_TEST_OPS_H_

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/gradient_walk.h"
#include "runtime/graph.h"
#include "runtime/node_resource.h"
#include "runtime/op_def.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace testing {

class TestVarResource : public NodeResource {
 public:
  explicit TestVarResource(Tensor v) : value(std::move(v)) {}
  Tensor value;
};

// A float vector tensor of `v`, and the values of a float tensor.
inline Tensor Vec(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromData<float>({n}, v).value();
}
inline std::vector<float> Values(const Tensor& t) {
  auto d = t.data<float>();
  return std::vector<float>(d.begin(), d.end());
}

class TestOps {
 public:
  TestOps() {
    Def("TestConst", [](OpKernelContext& c) -> absl::Status {
      auto v = GetAttr<Tensor>(c.attrs(), "value");
      if (!v.ok()) return v.status();
      c.set_output(0, *v);
      return absl::OkStatus();
    });
    defs_["Placeholder"] = std::make_unique<OpDef>(
        OpDef{.type = "Placeholder", .dispatch = OpDef::Dispatch::kFeed});
    defs_["NoOp"] = std::make_unique<OpDef>(
        OpDef{.type = "NoOp", .dispatch = OpDef::Dispatch::kNothing});
    Def(
        "Identity",
        [](OpKernelContext& c) {
          c.set_output(0, c.input(0));
          return absl::OkStatus();
        },
        [](const GradContext& g) -> GradResult {
          return std::vector<std::optional<Output>>{g.grad_outputs[0]};
        });
    Def("Add", BinaryKernel([](float a, float b) { return a + b; }),
        [](const GradContext& g) -> GradResult {
          return std::vector<std::optional<Output>>{g.grad_outputs[0],
                                                    g.grad_outputs[0]};
        });
    Def("Mul", BinaryKernel([](float a, float b) { return a * b; }),
        [this](const GradContext& g) -> GradResult {
          const Output& dz = *g.grad_outputs[0];
          auto da = Mul(dz, g.node.inputs[1]);
          if (!da.ok()) return da.status();
          auto db = Mul(dz, g.node.inputs[0]);
          if (!db.ok()) return db.status();
          return std::vector<std::optional<Output>>{*da, *db};
        });
    Def("Square", UnaryKernel([](float a) { return a * a; }),
        [this](const GradContext& g) -> GradResult {
          const Output& x = g.node.inputs[0];
          auto two_x = Add(x, x);
          if (!two_x.ok()) return two_x.status();
          auto dx = Mul(*g.grad_outputs[0], *two_x);
          if (!dx.ok()) return dx.status();
          return std::vector<std::optional<Output>>{*dx};
        });
    Def(
        "Sum",
        [](OpKernelContext& c) {
          float s = 0;
          for (float v : c.input(0).data<float>()) s += v;
          c.set_output(0, Tensor::Scalar<float>(s));
          return absl::OkStatus();
        },
        [this](const GradContext& g) -> GradResult {
          // d(sum x)/dx = broadcast of the scalar gradient.
          auto b = Broadcast(*g.grad_outputs[0], g.node.inputs[0]);
          if (!b.ok()) return b.status();
          return std::vector<std::optional<Output>>{*b};
        });
    Def("BroadcastLike", [](OpKernelContext& c) -> absl::Status {
      auto t = Tensor::Zeros(DT_FLOAT, c.input(1).shape());
      if (!t.ok()) return t.status();
      for (float& v : t->mutable_data<float>()) v = c.input(0).data<float>()[0];
      c.set_output(0, *std::move(t));
      return absl::OkStatus();
    });
    // Pick(a, b) = a; b gets no gradient (like a shape input).
    Def(
        "Pick",
        [](OpKernelContext& c) {
          c.set_output(0, c.input(0));
          return absl::OkStatus();
        },
        [](const GradContext& g) -> GradResult {
          return std::vector<std::optional<Output>>{g.grad_outputs[0],
                                                    std::nullopt};
        });
    Def("OnesLike", UnaryKernel([](float) { return 1.f; }));
    Def("ZerosLike", UnaryKernel([](float) { return 0.f; }));
    Def("AddN", [](OpKernelContext& c) -> absl::Status {
      auto t = Tensor::Zeros(DT_FLOAT, c.input(0).shape());
      if (!t.ok()) return t.status();
      auto out = t->mutable_data<float>();
      for (int i = 0; i < c.num_inputs(); ++i) {
        auto in = c.input(i).data<float>();
        for (size_t k = 0; k < out.size(); ++k) out[k] += in[k];
      }
      c.set_output(0, *std::move(t));
      return absl::OkStatus();
    });
    Def("ArgMaxish", UnaryKernel([](float a) { return a; }));  // no gradient
    Def("Fail", [](OpKernelContext& c) {
      return c.InvalidArgument("fails on purpose");
    });
    Def("Wrong", [](OpKernelContext& c) {
      c.set_output(0, Tensor::Scalar<int32_t>(1));
      return absl::OkStatus();
    });
    Def("Block", [this](OpKernelContext& c) {
      {
        std::unique_lock<std::mutex> l(block_mu_);
        blocked_ = true;
        block_cv_.notify_all();
        block_cv_.wait(l, [this] { return released_; });
      }
      c.set_output(0, c.input(0));
      return absl::OkStatus();
    });
    Def("Var", [](OpKernelContext&) { return absl::OkStatus(); });
    Def("Read", [](OpKernelContext& c) -> absl::Status {
      auto* var = dynamic_cast<TestVarResource*>(c.input_resource(0));
      if (var == nullptr) return c.InvalidArgument("no variable");
      c.set_output(0, var->value);
      return absl::OkStatus();
    });
  }

  using GradResult = absl::StatusOr<std::vector<std::optional<Output>>>;

  // Kernel runs of op `type` so far.
  int64_t runs(const std::string& type) const {
    return counters_.at(type)->load();
  }
  const OpDef* def(const std::string& type) const {
    return defs_.at(type).get();
  }

  // --- builders ---

  absl::StatusOr<Output> Const(Graph& g, Tensor value,
                               const std::string& name = "") {
    NodeSpec spec = Spec("TestConst", name, {DT_FLOAT}, {value.shape()});
    spec.attrs["value"] = std::move(value);
    return Build(g, std::move(spec));
  }
  absl::StatusOr<Output> Scalar(Graph& g, float v,
                                const std::string& name = "") {
    return Const(g, Tensor::Scalar<float>(v), name);
  }
  absl::StatusOr<Output> Placeholder(Graph& g, TensorShape shape,
                                     const std::string& name = "") {
    return Build(g, Spec("Placeholder", name, {DT_FLOAT}, {std::move(shape)}));
  }
  absl::StatusOr<Output> Unary(const std::string& op, const Output& x,
                               const std::string& name = "",
                               std::vector<NodeHandle> control = {}) {
    NodeSpec spec = Spec(op, name, {DT_FLOAT}, {x.shape()});
    spec.inputs = {x};
    spec.control_inputs = std::move(control);
    return Build(*x.graph(), std::move(spec));
  }
  absl::StatusOr<Output> Identity(const Output& x,
                                  const std::string& name = "") {
    return Unary("Identity", x, name);
  }
  absl::StatusOr<Output> Add(const Output& a, const Output& b,
                             const std::string& name = "") {
    return Binary("Add", a, b, name);
  }
  absl::StatusOr<Output> Mul(const Output& a, const Output& b,
                             const std::string& name = "") {
    return Binary("Mul", a, b, name);
  }
  absl::StatusOr<Output> Square(const Output& x, const std::string& name = "") {
    return Unary("Square", x, name);
  }
  absl::StatusOr<Output> Pick(const Output& a, const Output& b) {
    return Binary("Pick", a, b, "");
  }
  absl::StatusOr<Output> Sum(const Output& x, const std::string& name = "") {
    NodeSpec spec = Spec("Sum", name, {DT_FLOAT}, {TensorShape{}});
    spec.inputs = {x};
    return Build(*x.graph(), std::move(spec));
  }
  absl::StatusOr<Output> Broadcast(const Output& scalar, const Output& like) {
    NodeSpec spec = Spec("BroadcastLike", "", {DT_FLOAT}, {like.shape()});
    spec.inputs = {scalar, like};
    return Build(*like.graph(), std::move(spec));
  }
  absl::StatusOr<Output> AddN(const std::vector<Output>& xs) {
    NodeSpec spec = Spec("AddN", "", {DT_FLOAT}, {xs[0].shape()});
    spec.inputs = xs;
    return Build(*xs[0].graph(), std::move(spec));
  }
  absl::StatusOr<Output> Var(Graph& g, Tensor value,
                             const std::string& name = "") {
    NodeSpec spec = Spec("Var", name, {DT_RESOURCE}, {TensorShape{}});
    spec.resource = std::make_shared<TestVarResource>(std::move(value));
    return Build(g, std::move(spec));
  }
  absl::StatusOr<Output> Read(const Output& var, const std::string& name = "") {
    NodeSpec spec = Spec("Read", name, {DT_FLOAT}, {TensorShape{-1}});
    spec.inputs = {var};
    return Build(*var.graph(), std::move(spec));
  }
  absl::StatusOr<Output> NoOp(Graph& g, std::vector<NodeHandle> control,
                              const std::string& name = "") {
    NodeSpec spec = Spec("NoOp", name, {}, {});
    spec.control_inputs = std::move(control);
    return Build(g, std::move(spec));
  }

  GradientBuilders gradient_builders() {
    return GradientBuilders{
        .ones_like = [this](const Output& x) { return Unary("OnesLike", x); },
        .zeros_like = [this](const Output& x) { return Unary("ZerosLike", x); },
        .add_n = [this](const std::vector<Output>& xs) { return AddN(xs); },
    };
  }

  // "Block" kernels wait until Release(); WaitBlocked() waits for one to
  // start.
  void WaitBlocked() {
    std::unique_lock<std::mutex> l(block_mu_);
    block_cv_.wait(l, [this] { return blocked_; });
  }
  void Release() {
    std::lock_guard<std::mutex> l(block_mu_);
    released_ = true;
    block_cv_.notify_all();
  }

 private:
  template <typename F>
  static KernelFn UnaryKernel(F f) {
    return [f](OpKernelContext& c) -> absl::Status {
      auto t = Tensor::Zeros(DT_FLOAT, c.input(0).shape());
      if (!t.ok()) return t.status();
      auto in = c.input(0).data<float>();
      auto out = t->mutable_data<float>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = f(in[i]);
      c.set_output(0, *std::move(t));
      return absl::OkStatus();
    };
  }
  template <typename F>
  static KernelFn BinaryKernel(F f) {
    return [f](OpKernelContext& c) -> absl::Status {
      const Tensor& a = c.input(0);
      const Tensor& b = c.input(1);
      if (a.shape() != b.shape()) return c.InvalidArgument("shapes differ");
      auto t = Tensor::Zeros(DT_FLOAT, a.shape());
      if (!t.ok()) return t.status();
      auto x = a.data<float>();
      auto y = b.data<float>();
      auto out = t->mutable_data<float>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = f(x[i], y[i]);
      c.set_output(0, *std::move(t));
      return absl::OkStatus();
    };
  }

  void Def(const std::string& type, KernelFn kernel, GradFn grad = nullptr) {
    auto counter = std::make_unique<std::atomic<int64_t>>(0);
    std::atomic<int64_t>* n = counter.get();
    counters_[type] = std::move(counter);
    defs_[type] = std::make_unique<OpDef>(
        OpDef{.type = type,
              .kernel =
                  [n, kernel = std::move(kernel)](OpKernelContext& c) {
                    n->fetch_add(1);
                    return kernel(c);
                  },
              .gradient = std::move(grad)});
  }

  NodeSpec Spec(const std::string& op, const std::string& name,
                std::vector<DataType> types, std::vector<TensorShape> shapes) {
    NodeSpec spec;
    spec.op = op;
    spec.op_def = defs_.at(op).get();
    spec.name = name;
    spec.output_types = std::move(types);
    spec.output_shapes = std::move(shapes);
    return spec;
  }
  absl::StatusOr<Output> Build(Graph& g, NodeSpec spec) {
    auto h = g.AddNode(std::move(spec));
    if (!h.ok()) return h.status();
    return Output(*std::move(h), 0);
  }
  absl::StatusOr<Output> Binary(const std::string& op, const Output& a,
                                const Output& b, const std::string& name) {
    NodeSpec spec = Spec(op, name, {DT_FLOAT}, {a.shape()});
    spec.inputs = {a, b};
    return Build(*a.graph(), std::move(spec));
  }

  std::map<std::string, std::unique_ptr<OpDef>> defs_;
  std::map<std::string, std::unique_ptr<std::atomic<int64_t>>> counters_;
  std::mutex block_mu_;
  std::condition_variable block_cv_;
  bool blocked_ = false;
  bool released_ = false;
};

}  // namespace testing
}  // namespace graphgc

#endif  // GRAPHGC_TESTS_RUNTIME_TEST_OPS_H_
