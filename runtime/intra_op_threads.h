// runtime/intra_op_threads.h
//
// The process-wide intra-op thread count: how many threads a Session (and
// so a model) splits each kernel across when its options leave
// intra_op_threads at 0. By default it is every core this process may use
// (util/cpu_count.h: affinity and cgroup quota respected), as TensorFlow's
// and PyTorch's defaults are; SetIntraOpThreads changes it for the
// sessions and models created afterwards (those already made keep the
// count they were created with), and SetIntraOpThreads(0) restores the
// automatic value. Python: graphgc.config.set_intra_op_threads.
//
// Thread safety: both functions may be called from any thread at once.
//
// Example:
//   GG_RETURN_IF_ERROR(SetIntraOpThreads(1));  // every new model: 1 thread
//   int n = IntraOpThreads();                  // 1
#ifndef GRAPHGC_RUNTIME_INTRA_OP_THREADS_H_
#define GRAPHGC_RUNTIME_INTRA_OP_THREADS_H_

#include "absl/status/status.h"

namespace graphgc {

// The most intra-op threads a session uses; larger requests are cut here.
inline constexpr int kMaxIntraOpThreads = 1024;

// Sets the count for sessions and models created from now on: n >= 1 is
// that many threads, 0 the automatic value. InvalidArgument for n < 0 or
// n > kMaxIntraOpThreads, changing nothing.
absl::Status SetIntraOpThreads(int n);

// The count a session created now with intra_op_threads = 0 gets: the value
// set, or the automatic one (computed once, at the first call that needs it).
int IntraOpThreads();

// What was set: 0 while the count is automatic (tf.config.threading's
// getters answer this way).
int IntraOpThreadsSetting();

// `requested` as a session uses it: 0 (or below) is IntraOpThreads(),
// anything else that many threads, at most kMaxIntraOpThreads.
int ResolveIntraOpThreads(int requested);

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_INTRA_OP_THREADS_H_
