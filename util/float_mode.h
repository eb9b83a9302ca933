// util/float_mode.h
//
// ScopedFlushDenormals: for its scope, the calling thread's floating-point
// unit flushes denormal (subnormal) results to zero and reads denormal
// inputs as zero; the thread's earlier mode comes back when it ends.
// TensorFlow runs every kernel this way (its executor and its thread
// pools' threads); graphgc's executor does too (runtime/executor.h).
//
// Why: on x86 an operation that makes or reads a denormal takes a slow
// path, tens to a hundred times a normal one. A model trained long on
// the same data drives gradients and Adam's moments towards zero and
// through the denormal range: a hand-written Eigen MLP step trained long
// on one batch runs about twice as slow unflushed (bench/mlp_bench.cc's
// BM_EigenStep and BM_EigenStepUnflushed measure the two).
//
// x86-64: MXCSR's FTZ (bit 15) and DAZ (bit 6); AArch64: FPCR's FZ (bit
// 24). Elsewhere it does nothing and kFlushesDenormals is false.
//
// Example:
//   {
//     ScopedFlushDenormals flush;
//     RunKernels();  // denormals are zero in here
//   }
#ifndef GRAPHGC_UTIL_FLOAT_MODE_H_
#define GRAPHGC_UTIL_FLOAT_MODE_H_

#include <cstdint>

#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#define GRAPHGC_FLOAT_MODE_X86 1
#elif defined(__aarch64__)
#define GRAPHGC_FLOAT_MODE_AARCH64 1
#endif

namespace graphgc {

class ScopedFlushDenormals {
 public:
#if defined(GRAPHGC_FLOAT_MODE_X86) || defined(GRAPHGC_FLOAT_MODE_AARCH64)
  static constexpr bool kFlushesDenormals = true;
#else
  static constexpr bool kFlushesDenormals = false;
#endif

  ScopedFlushDenormals() : saved_(Read()) {
    // Writing the control register costs more than reading it: only when
    // the mode changes (a nested scope, or a thread that already flushes).
    if ((saved_ & kBits) != kBits) Write(saved_ | kBits);
  }
  ~ScopedFlushDenormals() {
    if ((saved_ & kBits) != kBits) Write(saved_);
  }
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
#if defined(GRAPHGC_FLOAT_MODE_X86)
  static constexpr uint64_t kBits = 0x8000 | 0x0040;  // FTZ | DAZ
  static uint64_t Read() { return _mm_getcsr(); }
  static void Write(uint64_t mode) {
    _mm_setcsr(static_cast<unsigned int>(mode));
  }
#elif defined(GRAPHGC_FLOAT_MODE_AARCH64)
  static constexpr uint64_t kBits = uint64_t{1} << 24;  // FZ
  static uint64_t Read() {
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    return fpcr;
  }
  static void Write(uint64_t mode) {
    __asm__ __volatile__("msr fpcr, %0" : : "r"(mode));
  }
#else
  static constexpr uint64_t kBits = 0;
  static uint64_t Read() { return 0; }
  static void Write(uint64_t) {}
#endif

  const uint64_t saved_;
};

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_FLOAT_MODE_H_
