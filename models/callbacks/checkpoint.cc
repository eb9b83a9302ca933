#include "models/callbacks/checkpoint.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "models/callbacks/logging.h"
#include "models/callbacks/model_access.h"
#include "models/callbacks/monitor.h"
#include "util/file.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace callbacks {

namespace {

// Digits only (and at least one).
bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

// The widest field or precision a checkpoint placeholder may ask for.
constexpr int kMaxFormatWidth = 64;

}  // namespace

absl::StatusOr<std::shared_ptr<ModelCheckpoint>> ModelCheckpoint::Create(
    ModelCheckpointOptions options) {
  std::shared_ptr<ModelCheckpoint> checkpoint(
      new ModelCheckpoint(std::move(options)));
  GG_RETURN_IF_ERROR(checkpoint->Validate());
  return checkpoint;
}

ModelCheckpoint::ModelCheckpoint(ModelCheckpointOptions options)
    : options_(std::move(options)) {}

absl::Status ModelCheckpoint::Validate() const {
  const std::string& path = options_.filepath;
  GG_RETURN_IF_ERROR(CheckPath(path, "ModelCheckpoint filepath"));
  if (options_.save_weights_only && !absl::EndsWith(path, ".weights.h5")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ModelCheckpoint: with save_weights_only the filepath must end in "
        "\".weights.h5\" (as Keras 3 requires), got '",
        path, "'"));
  }
  if (!options_.save_weights_only && absl::EndsWith(path, ".h5")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ModelCheckpoint: filepath '", path,
        "' ends in \".h5\", but without save_weights_only the whole model is "
        "saved as a directory (Sequential::Save), not an HDF5 file; set "
        "save_weights_only for a \".weights.h5\" file of the weights alone, "
        "or name a directory"));
  }
  if (options_.save_best_only) {
    GG_RETURN_IF_ERROR(CheckMonitorAndMode("ModelCheckpoint", options_.monitor,
                                           options_.mode));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ModelCheckpoint::FormatPath(
    int epoch, const Logs& logs) const {
  const std::string& f = options_.filepath;
  auto bad = [&](absl::string_view placeholder, absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("ModelCheckpoint: placeholder '", placeholder,
                     "' of filepath '", f, "' ", why));
  };
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if (c == '}') {
      if (i + 1 < f.size() && f[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      return bad("}", "is unmatched (write \"}}\" for a literal brace)");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const size_t close = f.find('}', i + 1);
    const size_t open = f.find('{', i + 1);
    if (close == std::string::npos ||
        (open != std::string::npos && open < close)) {
      return bad(
          absl::string_view(f).substr(
              i, open == std::string::npos ? std::string::npos : open - i),
          "is not closed by '}' (write \"{{\" for a literal brace)");
    }
    const absl::string_view placeholder =
        absl::string_view(f).substr(i, close - i + 1);
    const absl::string_view body =
        placeholder.substr(1, placeholder.size() - 2);
    const size_t colon = body.find(':');
    const absl::string_view name = body.substr(0, colon);
    const absl::string_view spec = colon == absl::string_view::npos
                                       ? absl::string_view()
                                       : body.substr(colon + 1);
    i = close;
    if (name.empty()) {
      return bad(placeholder,
                 "has no name: use {epoch}, {epoch:02d}, or a log key such as "
                 "{val_loss} or {val_loss:.2f}");
    }
    if (name == "epoch") {
      // "", "d", or "0Nd": zero-padded to N digits.
      int n = 0;
      if (!spec.empty()) {
        const absl::string_view width = spec.substr(0, spec.size() - 1);
        const bool ok =
            spec.back() == 'd' &&
            (width.empty() ||
             (width[0] == '0' && AllDigits(width) && width.size() <= 3 &&
              (n = std::atoi(std::string(width).c_str())) <= kMaxFormatWidth));
        if (!ok) {
          return bad(placeholder,
                     "has an unsupported format: the epoch takes {epoch}, "
                     "{epoch:d} or {epoch:0Nd} (N up to 64)");
        }
      }
      absl::StrAppend(&out, absl::StrFormat("%0*d", n, epoch + 1));
      continue;
    }
    auto it = logs.find(std::string(name));
    if (it == logs.end()) {
      std::string keys = "epoch";
      for (const auto& [key, value] : logs) absl::StrAppend(&keys, ", ", key);
      return bad(placeholder,
                 absl::StrCat("names neither the epoch nor a key of the logs "
                              "of epoch ",
                              epoch + 1, " (available: ", keys, ")"));
    }
    if (spec.empty()) {
      out += CSVLogger::FormatValue(it->second);  // Python's str(float)
      continue;
    }
    const absl::string_view precision =
        spec.size() >= 2 && spec.front() == '.' && spec.back() == 'f'
            ? spec.substr(1, spec.size() - 2)
            : absl::string_view();
    if (!AllDigits(precision) || precision.size() > 2 ||
        std::atoi(std::string(precision).c_str()) > kMaxFormatWidth) {
      return bad(placeholder,
                 "has an unsupported format: a log value takes {<key>} or "
                 "{<key>:.Nf} (N up to 64)");
    }
    absl::StrAppend(
        &out, absl::StrFormat("%.*f", std::atoi(std::string(precision).c_str()),
                              static_cast<double>(it->second)));
  }
  return out;
}

absl::Status ModelCheckpoint::OnTrainBegin(const Sequential& model,
                                           const TrainInfo&) {
  GG_RETURN_IF_ERROR(Validate());  // for callers other than Fit
  model_ = CallbackModelOf(model);
  best_.reset();
  return absl::OkStatus();
}

absl::Status ModelCheckpoint::OnEpochEnd(int epoch, const Logs& logs) {
  if (model_ == nullptr) {
    return absl::FailedPreconditionError(
        "ModelCheckpoint: OnEpochEnd before OnTrainBegin");
  }
  // As Keras: the path is formatted first, whether or not this epoch saves.
  GG_ASSIGN_OR_RETURN(const std::string path, FormatPath(epoch, logs));
  std::optional<float> improved;
  if (options_.save_best_only) {
    GG_ASSIGN_OR_RETURN(
        const float current,
        Monitored("ModelCheckpoint", options_.monitor, epoch, logs));
    // Keras 3: monitor_op(current, best), no min_delta, best starting at
    // initial_value_threshold or +-inf.
    const MonitorMode mode = ResolveMode(options_.mode, options_.monitor);
    const double inf = std::numeric_limits<double>::infinity();
    const double best =
        best_.has_value() ? static_cast<double>(*best_)
        : options_.initial_value_threshold.has_value()
            ? static_cast<double>(*options_.initial_value_threshold)
        : mode == MonitorMode::kMax ? -inf
                                    : inf;
    // Python's f"{best:.5f}": "inf" and "-inf" as printf's.
    const std::string best_text = absl::StrFormat("%.5f", best);
    if (!Improves(current, best, 0.0, mode, DeltaOn::kBest)) {
      if (options_.verbose > 0) {
        PrintMessage(absl::StrFormat("\nEpoch %d: %s did not improve from %s",
                                     epoch + 1, options_.monitor, best_text));
      }
      return absl::OkStatus();
    }
    improved = current;
    if (options_.verbose > 0) {
      PrintMessage(absl::StrFormat(
          "\nEpoch %d: %s improved from %s to %.5f, saving model to %s",
          epoch + 1, options_.monitor, best_text, current, path));
    }
  } else if (options_.verbose > 0) {
    PrintMessage(
        absl::StrFormat("\nEpoch %d: saving model to %s", epoch + 1, path));
  }
  const absl::Status s = options_.save_weights_only ? model_->SaveWeights(path)
                                                    : model_->Save(path);
  if (!s.ok()) {
    return Annotate(s, absl::StrCat("ModelCheckpoint: saving epoch ", epoch + 1,
                                    " to '", path, "'"));
  }
  if (improved.has_value()) best_ = improved;
  return absl::OkStatus();
}

absl::Status ModelCheckpoint::OnTrainEnd(const Logs&) {
  model_ = nullptr;
  return absl::OkStatus();
}

}  // namespace callbacks
}  // namespace graphgc
