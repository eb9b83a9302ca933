// models/callbacks/monitor.h
//
// What the callbacks that watch a metric (EarlyStopping, ReduceLROnPlateau,
// ModelCheckpoint with save_best_only) share: the mode, the checks of their
// monitor and mode options, reading the monitored value from an epoch's
// logs, Improves(), the one comparison of a value with the best so far, and
// PrintMessage, their verbose messages.
#ifndef GRAPHGC_MODELS_CALLBACKS_MONITOR_H_
#define GRAPHGC_MODELS_CALLBACKS_MONITOR_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graphgc::callbacks {

// Whether lower or higher values of the monitor are better.
enum class MonitorMode { kMin, kMax };

// The mode of a callback watching `monitor`: "min", "max", or "auto" (kMax
// when the monitor's name contains "acc", else kMin, as Keras).
MonitorMode ResolveMode(const std::string& mode, const std::string& monitor);

// InvalidArgument naming `who` if `monitor` is empty or `mode` is not
// "auto", "min" or "max".
absl::Status CheckMonitorAndMode(const std::string& who,
                                 const std::string& monitor,
                                 const std::string& mode);

// The value of `monitor` in the logs of `epoch` (0-based), or
// InvalidArgument naming `who`, the monitor and the keys the logs have.
absl::StatusOr<float> Monitored(const std::string& who,
                                const std::string& monitor, int epoch,
                                const std::map<std::string, float>& logs);

// Which side of the comparison min_delta moves. Keras's callbacks differ:
//   kCurrent: current - min_delta > best (kMax), current + min_delta < best
//             (kMin); EarlyStopping's monitor_op(current - min_delta, best)
//             with min_delta = |min_delta|, negated in min mode.
//   kBest:    current > best + min_delta (kMax), current < best - min_delta
//             (kMin); ReduceLROnPlateau's, min_delta as given.
// The two differ where the sums round: with best 1 and min_delta 1, a
// current of -2^-60 improves under kBest (-2^-60 < 0) but not under
// kCurrent (1 - 2^-60 rounds to 1, not < 1).
enum class DeltaOn { kCurrent, kBest };

// Whether `current` is better than `best` by more than `min_delta`, by the
// rule `delta_on` states. Strict: a value exactly at the boundary is no
// improvement. NaN never improves.
bool Improves(double current, double best, double min_delta, MonitorMode mode,
              DeltaOn delta_on);

// Keras's io_utils.print_msg: `message` and a line break on stderr (the
// stream of Fit's progress bar), flushed.
void PrintMessage(const std::string& message);

}  // namespace graphgc::callbacks

#endif  // GRAPHGC_MODELS_CALLBACKS_MONITOR_H_
