#include "models/epoch_steps.h"

#include <algorithm>

namespace graphgc {
namespace models_internal {

EpochSteps::Span EpochSteps::Next() {
  Span s;
  s.first = position_;
  s.new_pass = position_ == 0;
  const int64_t left = batches_ - position_;
  if (steps_ <= 0) {
    s.count = left;
  } else {
    s.count = std::min(steps_, left);
    s.ran_out = steps_ > left;
  }
  position_ += s.count;
  // Keras starts a new pass once this one is used up, warned or not.
  if (position_ >= batches_) position_ = 0;
  return s;
}

}  // namespace models_internal
}  // namespace graphgc
