// models/epoch_steps.h
//
// EpochSteps: which batches of a pass over array data each epoch runs, as
// Keras 3's EpochIterator hands them out. Without steps_per_epoch every
// epoch is one whole pass. With it, an epoch runs at most that many
// batches and the next epoch continues the same pass; when the pass runs
// out before an epoch has its steps, that epoch ends early (Keras warns
// "Your input ran out of data") and the next one starts a new pass. Fit
// uses one for training and one for validation_steps. Private to models/.
#ifndef GRAPHGC_MODELS_EPOCH_STEPS_H_
#define GRAPHGC_MODELS_EPOCH_STEPS_H_

#include <cstdint>

namespace graphgc {
namespace models_internal {

// Keras's warning when a pass runs out before steps_per_epoch batches.
inline constexpr char kRanOutOfData[] =
    "Your input ran out of data; interrupting training. Make sure that your "
    "dataset or generator can generate at least `steps_per_epoch * epochs` "
    "batches. You may need to use the `.repeat()` function when building "
    "your dataset.";

class EpochSteps {
 public:
  // A pass of `batches` batches (>= 1); `steps` 0 means one pass a
  // epoch, else the batches an epoch asks for (>= 1).
  EpochSteps(int64_t batches, int64_t steps)
      : batches_(batches), steps_(steps) {}

  // One epoch's share: batches [first, first + count) of the current pass.
  struct Span {
    int64_t first = 0;
    int64_t count = 0;
    bool new_pass = false;  // the pass starts here (reorder the samples)
    bool ran_out = false;   // fewer than `steps` were left: Keras warns
  };
  Span Next();

  // What the progress bar counts to: steps, or the batches of a pass.
  int64_t target() const { return steps_ > 0 ? steps_ : batches_; }

 private:
  int64_t batches_;
  int64_t steps_;
  int64_t position_ = 0;  // batches of the current pass already run
};

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_EPOCH_STEPS_H_
