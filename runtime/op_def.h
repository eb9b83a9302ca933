// runtime/op_def.h
//
// OpDef: what the runtime needs to know about an op type to run and
// differentiate it. The op registry (ops/registry.h) owns the OpDefs and
// adds what only builders and importers need (signatures, shape
// functions); every Node points at its OpDef for the node's whole life.
//
// Kernels: KernelFn computes a node's outputs from its inputs. It runs on
// the executor's thread with an OpKernelContext; it must not touch the
// graph (no node creation, no Collect(), which would deadlock or be
// deferred) and must give every output a fresh tensor or a tensor it read
// as an input. It never writes into an input's buffer, except one that
// forward_input_or_allocate_output handed over as an output.
//
// Gradients: GradFn builds, with the op builders, the subgraph that turns
// the gradients of a node's outputs into gradients of its inputs.
#ifndef GRAPHGC_RUNTIME_OP_DEF_H_
#define GRAPHGC_RUNTIME_OP_DEF_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/attr_value.h"
#include "runtime/graph.h"
#include "runtime/node_resource.h"
#include "runtime/node_view.h"
#include "runtime/tensor.h"

namespace Eigen {
struct ThreadPoolDevice;  // a struct in Eigen
}  // namespace Eigen

namespace graphgc {

struct FusionRule;  // runtime/fusion.h
struct Node;        // runtime/node.h, internal to runtime/

// What a kernel sees of one execution of its node.
class OpKernelContext {
 public:
  // `inputs` points at the input tensors, which the caller keeps in place
  // (unchanged) until the kernel returns: the executor passes its slots
  // without copying a tensor. `node` (runtime/ only: Node is internal to
  // it) is kept alive by the caller's pin for as long as the context lives.
  OpKernelContext(const Node& node, absl::Span<const Tensor* const> inputs,
                  absl::Span<NodeResource* const> input_resources,
                  const Eigen::ThreadPoolDevice* device, int64_t step_id);
  // The same, with the outputs written straight into `outputs` (one empty
  // tensor per output of the node), which the caller keeps: the executor
  // passes its slots, so no output is moved after the kernel returns.
  OpKernelContext(const Node& node, absl::Span<const Tensor* const> inputs,
                  absl::Span<NodeResource* const> input_resources,
                  const Eigen::ThreadPoolDevice* device, int64_t step_id,
                  absl::Span<Tensor> outputs);
  // The executor's form of the one above, inline: `attrs` and `resource`
  // are `node`'s own (Node::attrs, Node::resource), which the caller reads
  // (Node is internal to runtime/). The executor builds one context per
  // step, and a call into another translation unit for it was a tenth of
  // a trivial step's time.
  OpKernelContext(const Node& node, const AttrMap& attrs,
                  NodeResource* resource,
                  absl::Span<const Tensor* const> inputs,
                  absl::Span<NodeResource* const> input_resources,
                  const Eigen::ThreadPoolDevice* device, int64_t step_id,
                  absl::Span<Tensor> outputs)
      : node_(node),
        attrs_(attrs),
        resource_(resource),
        inputs_(inputs),
        input_resources_(input_resources),
        device_(device),
        step_id_(step_id),
        outputs_(outputs) {}
  // The first form for the node `node` shows, for code outside runtime/
  // (kernel tests): the context must not outlive `node`.
  OpKernelContext(const NodeView& node, absl::Span<const Tensor* const> inputs,
                  absl::Span<NodeResource* const> input_resources,
                  const Eigen::ThreadPoolDevice* device, int64_t step_id)
      : OpKernelContext(*node.node_, inputs, input_resources, device, step_id) {
  }
  OpKernelContext(const OpKernelContext&) = delete;
  OpKernelContext& operator=(const OpKernelContext&) = delete;

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const Tensor& input(int i) const { return *inputs_[i]; }
  // The resource of the node that produced input i (e.g. the variable
  // behind a DT_RESOURCE input), or nullptr.
  NodeResource* input_resource(int i) const { return input_resources_[i]; }
  // This node's own resource (a variable's state for VarHandleOp).
  NodeResource* resource() const { return resource_; }
  const AttrMap& attrs() const { return attrs_; }
  const std::string& node_name() const;
  const std::string& op() const;
  // The intra-op thread pool device (one thread by default).
  const Eigen::ThreadPoolDevice& device() const { return *device_; }
  int64_t step_id() const { return step_id_; }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  void set_output(int i, Tensor t) { outputs_[i] = std::move(t); }
  // Output i, allocated in place with unspecified elements (TensorFlow's
  // allocate_output), for a kernel that writes every element. A shape no
  // tensor can have is InvalidArgument naming the node; memory exhausted is
  // ResourceExhausted naming the node and the bytes asked for.
  absl::StatusOr<Tensor*> allocate_output(int i, DataType dtype,
                                          const TensorShape& shape) {
    Tensor& t = outputs_[i];
    if (absl::Status s = t.Reset(dtype, shape, /*zero=*/false); !s.ok()) {
      return Error(s);
    }
    return &t;
  }
  // Output `output` as input `input` itself, buffer and all, when the input
  // is forwardable (set_forwardable_inputs), no other tensor shares its
  // buffer, and dtype and shape agree; allocate_output otherwise
  // (TensorFlow's forward_input_or_allocate_output). Saves an allocation
  // and keeps the data in cache, for a kernel that computes each element
  // of the output from the same element of the input and may therefore
  // compute in place. After a forward, input(input) is empty: the kernel
  // reads it through pointers or maps taken before the call. `shape` may
  // be the input's own.
  absl::StatusOr<Tensor*> forward_input_or_allocate_output(
      int input, int output, DataType dtype, const TensorShape& shape) {
    if (input < 32 && ((forwardable_ >> input) & 1u) != 0) {
      // The executor marks only inputs that point at its own slots.
      Tensor& in = const_cast<Tensor&>(*inputs_[input]);
      if (in.dtype() == dtype && in.shape() == shape && in.RefCountIsOne()) {
        outputs_[output] = std::move(in);
        return &outputs_[output];
      }
    }
    return allocate_output(output, dtype, shape);
  }
  // Bit k set: input k is this run's last use of a tensor that the
  // executor holds in a slot of its own and that no other input of the
  // step reads, so a kernel may take it over as an output. Inputs 32 and
  // up are never forwarded.
  void set_forwardable_inputs(uint32_t mask) { forwardable_ = mask; }
  // Inline storage, when the context holds its outputs itself: most ops
  // have one or two outputs, so no allocation for them.
  using Outputs = absl::InlinedVector<Tensor, 2>;
  absl::Span<Tensor> outputs() { return outputs_; }

  // An InvalidArgument status prefixed with the op and node name, e.g.
  // "MatMul 'dense_1/MatMul': inner dims 3 vs 4".
  absl::Status InvalidArgument(absl::string_view message) const {
    return Error(absl::InvalidArgumentError(message));
  }
  // `status` (not OK) with its code kept and its message prefixed as
  // InvalidArgument's: a failed allocation stays ResourceExhausted.
  absl::Status Error(const absl::Status& status) const;

 private:
  const Node& node_;
  const AttrMap& attrs_;    // node_'s, read by kernels on every run
  NodeResource* resource_;  // node_'s own, or nullptr
  absl::Span<const Tensor* const> inputs_;
  absl::Span<NodeResource* const> input_resources_;
  const Eigen::ThreadPoolDevice* device_;
  int64_t step_id_;
  Outputs owned_outputs_;  // empty when the caller gave the outputs
  absl::Span<Tensor> outputs_;
  uint32_t forwardable_ = 0;
};

using KernelFn = std::function<absl::Status(OpKernelContext&)>;

// What a gradient function is given: the forward node, and for each of its
// outputs the gradient flowing back (nullopt: no gradient reaches it, which
// a GradFn treats as zero).
struct GradContext {
  NodeInfo node;
  std::vector<Output> outputs;
  std::vector<std::optional<Output>> grad_outputs;
  // Where the gradient nodes go: "<name_scope>/<forward node>_grad/<what>".
  std::string name_scope = "gradients";
};

// One entry per data input: its gradient, or nullopt when none flows to it
// (integer inputs, shapes, ...).
using GradFn = std::function<absl::StatusOr<std::vector<std::optional<Output>>>(
    const GradContext&)>;

struct OpDef {
  std::string type;  // TensorFlow's op type name, e.g. "MatMul"
  // Stateful ops (variables, random) are never merged or cached away.
  bool stateful = false;
  // How a Session's plan treats the op's nodes. kKernel: the kernel runs
  // every time. kConstant: no inputs and outputs that depend only on the
  // node's attributes (Const); the kernel runs once, when a plan is built,
  // and each run reuses its outputs. kHandle: every output is a DT_RESOURCE
  // handle that consumers reach through input_resource() (VarHandleOp); the
  // kernel does nothing and a plan skips it. kFeed: a feed point
  // (Placeholder): its value comes only from a Run's feeds, so a plan that
  // needs it unfed is refused, naming it. kNothing: the op computes nothing
  // (NoOp, which only orders its control inputs); a plan skips it.
  enum class Dispatch { kKernel, kConstant, kHandle, kFeed, kNothing };
  Dispatch dispatch = Dispatch::kKernel;
  // The outputs depend only on the inputs' dtypes and shapes, never on
  // their values (Shape, Size, ZerosLike, OnesLike): where every input's
  // static shape is fully defined, a plan computes them once, at build.
  bool shape_only = false;
  KernelFn kernel;  // may be empty for kFeed and kNothing ops
  // Optional: the kernel for one node, made from the node's attributes when
  // a plan is built (as TensorFlow's OpKernel reads its attributes in its
  // constructor), so that a run looks none up. It must behave exactly as
  // `kernel` on that node, errors included. Empty: plans use `kernel`.
  std::function<KernelFn(const AttrMap&)> bind;
  GradFn gradient;  // empty: not differentiable
  // The fusion rules whose chain starts with this op, longest chain first
  // (runtime/fusion.h; filled by OpRegistry::RegisterFusion). A plan tries
  // them in this order at each step of the op.
  std::vector<std::shared_ptr<const FusionRule>> fusions;
};

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_OP_DEF_H_
