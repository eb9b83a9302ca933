#include "runtime/executor.h"

#include <algorithm>
#include <map>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "runtime/intra_op_threads.h"
#include "runtime/node.h"
#include "runtime/op_def.h"
#include "unsupported/Eigen/CXX11/Tensor"
#include "unsupported/Eigen/CXX11/ThreadPool"
#include "util/float_mode.h"
#include "util/mutex.h"

namespace graphgc {
namespace exec {
namespace {

// Eigen's threads, each flushing denormals for its whole life, as the
// thread running the plan does for the run (Executor::Run).
struct FlushingThreadEnvironment : Eigen::StlThreadEnvironment {
  EnvThread* CreateThread(std::function<void()> f) {
    return StlThreadEnvironment::CreateThread([f = std::move(f)] {
      ScopedFlushDenormals flush;
      f();
    });
  }
};

using FlushingPool = Eigen::ThreadPoolTempl<FlushingThreadEnvironment>;

// The process's pool of `threads` threads, made at its first use and kept
// for the process's life (as TensorFlow's global intra-op pool): sessions
// come and go with their models, and starting threads for each would cost
// more than a small model's fit.
Eigen::ThreadPoolInterface* SharedPool(int threads) {
  // Never destroyed: worker threads must not be joined by static
  // destructors at exit while another thread may still be running a plan.
  static Mutex* const mu = new Mutex;
  static auto* const pools = new std::map<int, FlushingPool*>;
  WriterLock lock(*mu);
  FlushingPool*& pool = (*pools)[threads];
  if (pool == nullptr) pool = new FlushingPool(threads);
  return pool;
}

}  // namespace

Executor::Executor(int intra_op_threads) {
  const int threads =
      std::clamp(intra_op_threads, 1, graphgc::kMaxIntraOpThreads);
  device_ =
      std::make_unique<Eigen::ThreadPoolDevice>(SharedPool(threads), threads);
}

Executor::~Executor() = default;

absl::StatusOr<std::vector<Tensor>> Executor::Run(const PinnedRun& run,
                                                  const Feeds& feeds) {
  const Plan& plan = run.plan();
  std::vector<Tensor> slots(plan.num_slots);
  for (size_t i = 0; i < feeds.size(); ++i) {
    const FeedCheck& check = plan.feeds[i];
    const Tensor& t = feeds[i].second;
    if (t.dtype() != check.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("Session::Run: feed '", check.name, "' expects a ",
                       DataTypeString(check.dtype), " tensor, got ",
                       DataTypeString(t.dtype())));
    }
    if (!check.shape.IsCompatibleWith(t.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Session::Run: feed '", check.name, "' has shape ",
          t.shape().DebugString(), ", incompatible with its static shape ",
          check.shape.DebugString()));
    }
    slots[check.slot] = t;
  }

  const int64_t step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  // As TensorFlow's executor: kernels see denormals as zero (util/
  // float_mode.h); the caller's mode comes back when the run returns.
  ScopedFlushDenormals flush;
  // Inline for the usual few inputs: no allocation per run.
  absl::InlinedVector<const Tensor*, 16> in_storage(plan.max_inputs, nullptr);
  // A raw view: InlinedVector's operator[] tests for inline storage on every
  // access, which was a fifth of this loop's instructions.
  const Tensor** const in = in_storage.data();
  // Read once: a kernel call is opaque, so members read in the loop would
  // be read again on every step.
  const absl::Span<const Step> steps = plan.steps;
  const InputRef* const inputs = plan.inputs.data();
  const Node* const* const nodes = run.nodes().data();
  NodeResource* const* const resources = run.all_resources().data();
  Tensor* const slot_data = slots.data();
  const Eigen::ThreadPoolDevice* const device = device_.get();
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    // A constant's consumers and fetches read it from the plan.
    if (step.kind != Step::Kind::kRun) continue;
    const InputRef* refs = inputs + step.input_begin;
    const Node& node = *nodes[s];
    for (uint32_t k = 0; k < step.num_inputs; ++k) {
      in[k] = refs[k].constant >= 0 ? &plan.constants[refs[k].constant]
                                    : &slot_data[refs[k].slot];
    }
    // The kernel writes its outputs straight into their slots.
    const absl::Span<Tensor> outs(slot_data + step.output_base,
                                  step.num_outputs);
    OpKernelContext ctx(node, node.attrs(), node.resource.get(),
                        absl::Span<const Tensor* const>(in, step.num_inputs),
                        absl::Span<NodeResource* const>(
                            resources + step.input_begin, step.num_inputs),
                        device, step_id, outs);
    ctx.set_forwardable_inputs(step.forwardable);
    if (!step.kernel) {
      return absl::UnimplementedError(absl::StrCat(
          "Session::Run: ", node.op(), " '", node.name, "' has no kernel"));
    }
    if (absl::Status status = step.kernel(ctx); !status.ok()) {
      return KernelError(node, status);
    }
    // Let go of each input this step read last, so its buffer is freed (or
    // an optimizer finds its variable unshared) after its last reader
    // rather than at the end of the run.
    const uint32_t* takes = plan.takes.data() + step.take_begin;
    for (uint32_t k = 0; k < step.num_takes; ++k) slot_data[takes[k]].Clear();
    // The plan's copy of what the node declares, tested inline; the node
    // and CheckOutputs only for the error.
    const OutputCheck* checks = plan.output_checks.data() + step.output_base;
    for (uint32_t k = 0; k < step.num_outputs; ++k) {
      if (!OutputMatches(checks[k], outs[k])) {
        return CheckOutputs(node, absl::MakeConstSpan(checks, step.num_outputs),
                            outs);
      }
    }
  }

  std::vector<Tensor> result;
  result.reserve(plan.fetch_slots.size());
  for (size_t i = 0; i < plan.fetch_slots.size(); ++i) {
    const int32_t constant = plan.fetch_constants[i];
    result.push_back(constant >= 0 ? plan.constants[constant]
                                   : slots[plan.fetch_slots[i]]);
  }
  return result;
}

}  // namespace exec
}  // namespace graphgc
