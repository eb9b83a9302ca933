#include "models/callbacks/monitor.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace graphgc::callbacks {

MonitorMode ResolveMode(const std::string& mode, const std::string& monitor) {
  if (mode == "max") return MonitorMode::kMax;
  if (mode == "min") return MonitorMode::kMin;
  return monitor.find("acc") != std::string::npos ? MonitorMode::kMax
                                                  : MonitorMode::kMin;
}

absl::Status CheckMonitorAndMode(const std::string& who,
                                 const std::string& monitor,
                                 const std::string& mode) {
  if (monitor.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(who,
                     ": monitor is empty; name a log key, e.g. "
                     "\"val_loss\""));
  }
  if (mode != "auto" && mode != "min" && mode != "max") {
    return absl::InvalidArgumentError(
        absl::StrCat(who, ": mode must be \"auto\", \"min\" or \"max\", got \"",
                     mode, "\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<float> Monitored(const std::string& who,
                                const std::string& monitor, int epoch,
                                const std::map<std::string, float>& logs) {
  auto it = logs.find(monitor);
  if (it != logs.end()) return it->second;
  std::string keys;
  for (const auto& [key, value] : logs) {
    absl::StrAppend(&keys, keys.empty() ? "" : ", ", key);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      who, ": monitor '", monitor, "' is not in the logs of epoch ", epoch + 1,
      " (available: ", keys.empty() ? "none" : keys, ")",
      monitor.rfind("val_", 0) == 0 ? "; validation metrics need "
                                      "FitOptions::validation_data"
                                    : ""));
}

bool Improves(double current, double best, double min_delta, MonitorMode mode,
              DeltaOn delta_on) {
  const bool max = mode == MonitorMode::kMax;
  if (delta_on == DeltaOn::kCurrent) {
    return max ? current - min_delta > best : current + min_delta < best;
  }
  return max ? current > best + min_delta : current < best - min_delta;
}

void PrintMessage(const std::string& message) {
  std::fputs(message.c_str(), stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace graphgc::callbacks
