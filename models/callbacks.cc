#include "models/callbacks.h"

#include <unistd.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphgc {

absl::Status Callback::OnTrainBegin(const Sequential&, const TrainInfo&) {
  return absl::OkStatus();
}
absl::Status Callback::OnTrainEnd(const Logs&) { return absl::OkStatus(); }
absl::Status Callback::OnEpochBegin(int) { return absl::OkStatus(); }
absl::Status Callback::OnEpochEnd(int, const Logs&) { return absl::OkStatus(); }
absl::Status Callback::OnBatchBegin(int64_t) { return absl::OkStatus(); }
absl::Status Callback::OnBatchEnd(int64_t, const Logs&) {
  return absl::OkStatus();
}

namespace callbacks {
namespace {

// Keras formats a metric with 4 decimals, or in scientific notation when it
// is tiny.
std::string FormatValue(double v) {
  return std::fabs(v) > 1e-3 ? absl::StrFormat("%.4f", v)
                             : absl::StrFormat("%.4e", v);
}

}  // namespace

std::shared_ptr<ProgressBar> ProgressBar::Create(ProgressBarOptions options) {
  return std::make_shared<ProgressBar>(options);
}

ProgressBar::ProgressBar(ProgressBarOptions options) : options_(options) {
  redraw_ = options_.redraw >= 0 ? options_.redraw != 0
                                 : isatty(fileno(options_.out)) != 0;
}

absl::Status ProgressBar::OnTrainBegin(const Sequential&,
                                       const TrainInfo& info) {
  info_ = info;
  return absl::OkStatus();
}

absl::Status ProgressBar::OnEpochBegin(int epoch) {
  seen_ = 0;
  loss_sum_ = 0;
  metric_sums_.clear();
  epoch_logs_.clear();
  epoch_start_ = absl::Now();
  std::fprintf(options_.out, "Epoch %d/%d\n", epoch + 1, info_.epochs);
  return absl::OkStatus();
}

absl::Status ProgressBar::OnBatchEnd(int64_t, const Logs& logs) {
  auto size_it = logs.find("size");
  const double size = size_it == logs.end() ? 0 : size_it->second;
  seen_ += static_cast<int64_t>(size);
  for (const auto& [key, value] : logs) {
    if (key != "size") metric_sums_[key] += value * size;
  }
  if (redraw_) {
    std::fprintf(options_.out, "\r%s", Line(false).c_str());
    std::fflush(options_.out);
  }
  return absl::OkStatus();
}

absl::Status ProgressBar::OnEpochEnd(int, const Logs& logs) {
  epoch_logs_ = logs;
  std::fprintf(options_.out, "%s%s\n", redraw_ ? "\r" : "", Line(true).c_str());
  std::fflush(options_.out);
  return absl::OkStatus();
}

std::string ProgressBar::Line(bool final) const {
  const int64_t total = info_.samples;
  const int64_t current = final ? total : seen_;
  const int digits = static_cast<int>(absl::StrCat(total).size());
  std::string line = absl::StrFormat("%*d/%d [", digits, current, total);
  constexpr int kWidth = 30;
  const int filled =
      total > 0 ? static_cast<int>(kWidth * current / total) : kWidth;
  if (filled > 0) {
    line += std::string(filled - 1, '=');
    line += current < total ? '>' : '=';
  }
  line += std::string(kWidth - filled, '.');
  line += "]";
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - epoch_start_);
  if (final) {
    absl::StrAppendFormat(&line, " - %.0fs", elapsed);
    const double per = current > 0 ? elapsed / current : 0;
    if (per >= 1) {
      absl::StrAppendFormat(&line, " %.0fs/sample", per);
    } else if (per >= 1e-3) {
      absl::StrAppendFormat(&line, " %.0fms/sample", per * 1e3);
    } else {
      absl::StrAppendFormat(&line, " %.0fus/sample", per * 1e6);
    }
  } else if (current > 0) {
    const double eta = elapsed / current * (total - current);
    absl::StrAppendFormat(&line, " - ETA: %.0fs", eta);
  }
  if (final && !epoch_logs_.empty()) {
    // Training metrics first, then validation ones, as Keras orders them.
    for (bool val : {false, true}) {
      for (const auto& [key, value] : epoch_logs_) {
        if ((key.rfind("val_", 0) == 0) != val) continue;
        absl::StrAppend(&line, " - ", key, ": ", FormatValue(value));
      }
    }
  } else if (current > 0) {
    for (const auto& [key, sum] : metric_sums_) {
      absl::StrAppend(&line, " - ", key, ": ", FormatValue(sum / current));
    }
  }
  return line;
}

}  // namespace callbacks
}  // namespace graphgc
