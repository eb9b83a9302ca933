#include "ops/parallel.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ops/small_gemm.h"
#include "runtime/graph.h"
#include "runtime/op_def.h"
#include "runtime/session.h"
#include "util/mutex.h"

namespace graphgc {
namespace {

using op_util::ParallelFor;
using op_util::ParallelMatMul;
using op_util::ThreadsFor;
using op_util::UnitCost;

// Runs `body` as the kernel of a node, in a session of `threads` intra-op
// threads.
void RunAsKernel(int threads,
                 const std::function<void(OpKernelContext&)>& body) {
  Graph g;
  OpDef def{.type = "Probe", .kernel = [&](OpKernelContext& c) {
              body(c);
              return absl::OkStatus();
            }};
  NodeSpec spec;
  spec.op = "Probe";
  spec.op_def = &def;
  NodeHandle node = g.AddNode(std::move(spec)).value();
  Session session(g, {.intra_op_threads = threads});
  ASSERT_TRUE(session.Run({}, {}, {Output(node, 0)}).ok());
}

// The ranges ParallelFor called f with, and the threads it called it on.
struct Calls {
  ExclusiveMutex mu;
  std::vector<std::pair<int64_t, int64_t>> ranges ABSL_GUARDED_BY(mu);
  std::set<std::thread::id> threads ABSL_GUARDED_BY(mu);

  void Record(int64_t begin, int64_t end) {
    ExclusiveLock lock(mu);
    ranges.emplace_back(begin, end);
    threads.insert(std::this_thread::get_id());
  }
  // Whether the ranges are disjoint and cover [0, n).
  bool Cover(int64_t n) {
    ExclusiveLock lock(mu);
    std::vector<std::pair<int64_t, int64_t>> sorted = ranges;
    std::sort(sorted.begin(), sorted.end());
    int64_t next = 0;
    for (const auto& [b, e] : sorted) {
      if (b != next || e <= b) return false;
      next = e;
    }
    return next == n;
  }
};

constexpr UnitCost kTiny{.cycles = 1};
constexpr UnitCost kHuge{.cycles = 1e6};

TEST(ParallelFor, SmallWorkRunsOnTheCallingThreadAlone) {
  Calls calls;
  std::thread::id caller;
  RunAsKernel(4, [&](OpKernelContext& ctx) {
    caller = std::this_thread::get_id();
    ParallelFor(ctx, 1000, kTiny,
                [&](int64_t b, int64_t e) { calls.Record(b, e); });
  });
  ExclusiveLock lock(calls.mu);
  ASSERT_EQ(calls.ranges.size(), 1u);
  EXPECT_EQ(calls.ranges[0], (std::pair<int64_t, int64_t>{0, 1000}));
  EXPECT_EQ(*calls.threads.begin(), caller);
}

// Four units, as many as threads: the caller runs the first block and hands
// the others to the pool, so at least two threads take part.
TEST(ParallelFor, LargeWorkIsSharedWithTheDevicesThreads) {
  Calls calls;
  RunAsKernel(4, [&](OpKernelContext& ctx) {
    ParallelFor(ctx, 4, kHuge,
                [&](int64_t b, int64_t e) { calls.Record(b, e); });
  });
  EXPECT_TRUE(calls.Cover(4));
  ExclusiveLock lock(calls.mu);
  EXPECT_GT(calls.threads.size(), 1u);
}

TEST(ParallelFor, OneThreadRunsLargeWorkInOneCall) {
  Calls calls;
  RunAsKernel(1, [&](OpKernelContext& ctx) {
    ParallelFor(ctx, 64, kHuge,
                [&](int64_t b, int64_t e) { calls.Record(b, e); });
  });
  ExclusiveLock lock(calls.mu);
  ASSERT_EQ(calls.ranges.size(), 1u);
  EXPECT_EQ(calls.ranges[0], (std::pair<int64_t, int64_t>{0, 64}));
}

TEST(ThreadsFor, IsOneForSmallWorkAndAtMostTheDevicesAndTheUnits) {
  RunAsKernel(4, [](OpKernelContext& ctx) {
    EXPECT_EQ(ThreadsFor(ctx, 1000, kTiny), 1);
    EXPECT_EQ(ThreadsFor(ctx, 64, kHuge), 4);
    EXPECT_EQ(ThreadsFor(ctx, 2, kHuge), 2);
  });
}

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// A product large enough to be split by rows across 4 threads, with every
// transpose and the bias and relu epilogue.
TEST(ParallelMatMul, ASplitProductMatchesTheWholeOne) {
  const int64_t m = 256, n = 64, k = 256;
  const std::vector<float> a = Random(m * k, 1), b = Random(k * n, 2),
                           bias = Random(n, 3);
  const gemm::Epilogue epilogue{.bias = bias.data(), .relu = true};
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      std::vector<float> want(m * n), got(m * n);
      gemm::MatMulWithEpilogue(a.data(), b.data(), want.data(), m, n, k, ta, tb,
                               epilogue);
      RunAsKernel(4, [&](OpKernelContext& ctx) {
        ParallelMatMul(ctx, a.data(), b.data(), got.data(), m, n, k, ta, tb,
                       epilogue);
      });
      for (int64_t i = 0; i < m * n; ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-4 * std::max(1.f, std::abs(want[i])))
            << "ta " << ta << " tb " << tb << " element " << i;
      }
    }
  }
}

TEST(ParallelMatMul, OnOneThreadIsMatMulWithEpilogueBitForBit) {
  const int64_t m = 256, n = 64, k = 256;
  const std::vector<float> a = Random(m * k, 4), b = Random(k * n, 5),
                           bias = Random(n, 6);
  const gemm::Epilogue epilogue{.bias = bias.data(), .relu = true};
  std::vector<float> want(m * n), got(m * n);
  gemm::MatMulWithEpilogue(a.data(), b.data(), want.data(), m, n, k, true,
                           false, epilogue);
  RunAsKernel(1, [&](OpKernelContext& ctx) {
    ParallelMatMul(ctx, a.data(), b.data(), got.data(), m, n, k, true, false,
                   epilogue);
  });
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace graphgc
