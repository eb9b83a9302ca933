// runtime/executor.h
//
// exec::Executor: runs a pinned plan (runtime/plan.h) on one thread, step by
// step in the plan's order, with an intra-op device for the kernels
// (OpKernelContext::device()) over the process's pool of that many threads
// (one pool per thread count, shared by every executor asking for it). A
// kernel splits its work across it only where its cost estimate says the
// split pays (Eigen's parallelFor with a TensorOpCost; ops/op_util.h's
// ParallelFor), so small ops run on the calling thread. A run's tensors live in
// one vector of slots indexed as the plan says; each step's kernel reads its
// inputs in place and writes its outputs straight into their slots; each step
// clears the slots it read last (Plan::takes) once its kernel returns.
// Kernels run with denormals flushed to zero, on the calling thread and on
// the pool's (util/float_mode.h), as TensorFlow runs its kernels: a
// denormal result is 0 and a denormal input reads as 0. The calling
// thread's own mode is back when Run returns.
//
// Thread safety: Run may be called concurrently; each call has its own
// slots. Kernels run without any graph lock and must not call into the
// graph (runtime/op_def.h).
#ifndef GRAPHGC_RUNTIME_EXECUTOR_H_
#define GRAPHGC_RUNTIME_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/plan.h"
#include "runtime/plan_builder.h"
#include "runtime/tensor.h"

namespace Eigen {
struct ThreadPoolDevice;  // a struct in Eigen
}  // namespace Eigen

namespace graphgc {
namespace exec {

class Executor {
 public:
  // Values of `intra_op_threads` below 1 mean 1, above kMaxIntraOpThreads
  // (runtime/intra_op_threads.h) that many.
  explicit Executor(int intra_op_threads);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // The device kernels run on (also for folding when a plan is built).
  const Eigen::ThreadPoolDevice* device() const { return device_.get(); }

  // Runs `run`'s plan with `feeds` (in the order the plan was built for)
  // and returns the fetched tensors. A feed of the wrong dtype or shape is
  // InvalidArgument naming it; a kernel's failure is returned as the kernel
  // gave it, named for its node (KernelError); an output that is not what
  // its node declares is Internal (CheckOutputs).
  absl::StatusOr<std::vector<Tensor>> Run(const PinnedRun& run,
                                          const Feeds& feeds);

 private:
  std::unique_ptr<Eigen::ThreadPoolDevice> device_;
  std::atomic<int64_t> next_step_id_{1};
};

}  // namespace exec
}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_EXECUTOR_H_
