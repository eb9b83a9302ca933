// bench/peer_shape.cc
#include "bench/peer_shape.h"

#include <cstdio>

namespace graphgc::bench {

std::string_view PeerNodeName(int64_t model, int64_t node,
                              char (&buffer)[kPeerNameCapacity]) {
  // At most 59 characters with two 20-character int64s: it always fits.
  const int n = std::snprintf(
      buffer, sizeof(buffer), "model_%lld/dense/MatMul_%lld",
      static_cast<long long>(model), static_cast<long long>(node));
  return std::string_view(buffer, n > 0 ? static_cast<size_t>(n) : 0);
}

bool PeerModelDropped(int64_t model, int64_t garbage_pct) {
  // Spread: of models 0..99, those whose scaled index crosses a whole step.
  const int64_t k = model % 100;
  return (k + 1) * garbage_pct / 100 > k * garbage_pct / 100;
}

}  // namespace graphgc::bench
