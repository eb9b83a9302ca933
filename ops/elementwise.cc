#include "ops/elementwise.h"

namespace graphgc {
namespace elementwise {

bool IsTrailingOf(const TensorShape& small, const TensorShape& big) {
  int s = 0;
  while (s < small.dims() && small[s] == 1) ++s;
  const int k = small.dims() - s;
  if (k > big.dims()) return false;
  for (int i = 0; i < k; ++i) {
    if (small[s + i] != big[big.dims() - k + i]) return false;
  }
  return true;
}

bool IsLeadingOf(const TensorShape& small, const TensorShape& big) {
  if (small.dims() != big.dims()) return false;
  int d = small.dims();
  while (d > 0 && small[d - 1] == 1) --d;
  for (int i = 0; i < d; ++i) {
    if (small[i] != big[i]) return false;
  }
  return true;
}

}  // namespace elementwise
}  // namespace graphgc
