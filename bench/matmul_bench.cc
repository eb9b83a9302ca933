// bench/matmul_bench.cc
//
// The MatMul kernel's products on the five shapes of one training step of
// the 10-64-10 MLP at batch 32 (issue 4), row-major m x n x k with the
// transposes the gradients use:
//   0: 32x64x10 NN (x W1)      1: 32x10x64 NN (h W2)
//   2: 64x10x32 TN (h^T g)     3: 32x64x10 NT (g W2^T)
//   4: 10x64x32 TN (x^T dh)
// BM_EigenMatMul is Eigen's blocked GEMM (the kernel before the small path),
// BM_SmallMatMul the register-blocked small path, BM_MatMul what the kernel
// runs (gemm::MatMul's choice). BM_*MatMulSquare times n x n x n products on
// both sides of the threshold. BM_Transpose: gemm::Transpose on the shapes
// these products transpose. --benchmark_format=json for JSON.
#include <cstdint>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "ops/small_gemm.h"

namespace graphgc {
namespace {

struct Shape {
  int64_t m, n, k;
  bool ta, tb;
};

constexpr Shape kMlpShapes[] = {
    {32, 64, 10, false, false}, {32, 10, 64, false, false},
    {64, 10, 32, true, false},  {32, 64, 10, false, true},
    {10, 64, 32, true, false},
};

using MatMulFn = void (*)(const float*, const float*, float*, int64_t, int64_t,
                          int64_t, bool, bool);

void RunShape(benchmark::State& state, MatMulFn fn, const Shape& s) {
  std::mt19937 rng(301);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  for (auto _ : state) {
    fn(a.data(), b.data(), c.data(), s.m, s.n, s.k, s.ta, s.tb);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                 std::to_string(s.k) + (s.ta ? " T" : " N") +
                 (s.tb ? "T" : "N"));
  state.counters["GFLOPS"] = benchmark::Counter(
      2.0 * s.m * s.n * s.k, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_EigenMatMul(benchmark::State& state) {
  RunShape(state, gemm::EigenMatMul, kMlpShapes[state.range(0)]);
}
void BM_SmallMatMul(benchmark::State& state) {
  RunShape(state, gemm::SmallMatMul, kMlpShapes[state.range(0)]);
}
void BM_MatMul(benchmark::State& state) {
  RunShape(state, gemm::MatMul, kMlpShapes[state.range(0)]);
}
BENCHMARK(BM_EigenMatMul)->DenseRange(0, 4);
BENCHMARK(BM_SmallMatMul)->DenseRange(0, 4);
BENCHMARK(BM_MatMul)->DenseRange(0, 4);

// All five shapes back to back: the MatMul share of one MLP step.
void RunStep(benchmark::State& state, MatMulFn fn) {
  std::mt19937 rng(301);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> a(64 * 64), b(64 * 64), c(64 * 64);
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  for (auto _ : state) {
    for (const Shape& s : kMlpShapes) {
      fn(a.data(), b.data(), c.data(), s.m, s.n, s.k, s.ta, s.tb);
      benchmark::DoNotOptimize(c.data());
      benchmark::ClobberMemory();
    }
  }
}
void BM_EigenMatMulMlpStep(benchmark::State& state) {
  RunStep(state, gemm::EigenMatMul);
}
void BM_MatMulMlpStep(benchmark::State& state) { RunStep(state, gemm::MatMul); }
BENCHMARK(BM_EigenMatMulMlpStep);
BENCHMARK(BM_MatMulMlpStep);

void RunSquare(benchmark::State& state, MatMulFn fn) {
  const int64_t n = state.range(0);
  const bool ta = state.range(1) & 1, tb = state.range(1) & 2;
  RunShape(state, fn, Shape{n, n, n, ta, tb});
}
void BM_EigenMatMulSquare(benchmark::State& state) {
  RunSquare(state, gemm::EigenMatMul);
}
void BM_SmallMatMulSquare(benchmark::State& state) {
  RunSquare(state, gemm::SmallMatMul);
}
BENCHMARK(BM_EigenMatMulSquare)
    ->ArgsProduct({{16, 32, 48, 64, 80, 90}, {0, 1, 2, 3}})
    ->ArgsProduct({{96, 128, 160, 192, 256}, {0, 1}});
BENCHMARK(BM_SmallMatMulSquare)
    ->ArgsProduct({{16, 32, 48, 64, 80, 90}, {0, 1, 2, 3}})
    ->ArgsProduct({{96, 128, 160, 192, 256}, {0, 1}});

// Other shapes: {m, n, k, transposes (bit 0: a, bit 1: b)}.
void RunOther(benchmark::State& state, MatMulFn fn) {
  RunShape(state, fn,
           Shape{state.range(0), state.range(1), state.range(2),
                 (state.range(3) & 1) != 0, (state.range(3) & 2) != 0});
}
void BM_EigenMatMulOther(benchmark::State& state) {
  RunOther(state, gemm::EigenMatMul);
}
void BM_SmallMatMulOther(benchmark::State& state) {
  RunOther(state, gemm::SmallMatMul);
}
#define GG_OTHER_SHAPES        \
  Args({256, 1, 256, 0})       \
      ->Args({256, 1, 256, 1}) \
      ->Args({1, 256, 256, 0}) \
      ->Args({256, 4, 256, 0}) \
      ->Args({64, 1, 64, 0})   \
      ->Args({8, 8, 8, 0})     \
      ->Args({4, 4, 4, 0})     \
      ->Args({2, 3, 2, 3})     \
      ->Args({64, 64, 512, 0}) \
      ->Args({512, 64, 64, 0}) \
      ->Args({64, 512, 64, 2})
BENCHMARK(BM_EigenMatMulOther)->GG_OTHER_SHAPES;
BENCHMARK(BM_SmallMatMulOther)->GG_OTHER_SHAPES;

// gemm::Transpose on the transposes one MLP step's products make: rows x
// cols of a row-major matrix.
void BM_Transpose(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  std::vector<float> src(rows * cols, 1.f), dst(rows * cols);
  for (auto _ : state) {
    gemm::Transpose(src.data(), rows, cols, cols, dst.data(), rows);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Transpose)
    ->Args({32, 64})
    ->Args({10, 32})
    ->Args({10, 64})
    ->Args({64, 10})
    ->Args({16, 16});

}  // namespace
}  // namespace graphgc
