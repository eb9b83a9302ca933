// bench/peer_shape.cc
#include "bench/peer_shape.h"

#include <algorithm>
#include <charconv>
#include <cstddef>

namespace graphgc::bench {

std::string_view PeerNodeName(int64_t model, int64_t node,
                              char (&buffer)[kPeerNameCapacity]) {
  // std::to_chars, not snprintf: snprintf and its helpers were 10.4% of
  // all samples of `perf record -g gc_bench
  // --benchmark_filter='BM_PeerGraphgcCollect/1/'` (47987e5's parent), and
  // both sides of the peer name their nodes here.
  constexpr std::string_view kPrefix = "model_";
  constexpr std::string_view kMiddle = "/dense/MatMul_";
  constexpr size_t kInt64Chars = 20;  // "-9223372036854775808"
  static_assert(kPrefix.size() + kMiddle.size() + 2 * kInt64Chars + 1 <=
                    kPeerNameCapacity,
                "two int64s always fit");
  char* const end = buffer + kPeerNameCapacity - 1;  // room for the NUL
  char* p = std::copy(kPrefix.begin(), kPrefix.end(), buffer);
  p = std::to_chars(p, end, model).ptr;
  p = std::copy(kMiddle.begin(), kMiddle.end(), p);
  p = std::to_chars(p, end, node).ptr;
  *p = '\0';
  return std::string_view(buffer, static_cast<size_t>(p - buffer));
}

bool PeerModelDropped(int64_t model, int64_t garbage_pct) {
  // Spread: of models 0..99, those whose scaled index crosses a whole step.
  const int64_t k = model % 100;
  return (k + 1) * garbage_pct / 100 > k * garbage_pct / 100;
}

}  // namespace graphgc::bench
