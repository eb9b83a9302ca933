#include "models/callbacks.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <typeinfo>
#include <unordered_map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "serialize/event.pb.h"
#include "serialize/event_file.h"
#include "serialize/graph_def.h"
#include "serialize/summary.pb.h"
#include "serialize/tensor.pb.h"
#include "serialize/tfrecord.h"
#include "util/file.h"
#include "util/mutex.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// Which running fit holds each claimed callback: the model's name by the
// callback's address (a claimed callback is kept alive by its claim, so the
// address cannot be reused while it is here).
struct ClaimRegistry {
  Mutex mu;
  std::unordered_map<const Callback*, std::string> model_of ABSL_GUARDED_BY(mu);
};

ClaimRegistry& Claims() {
  static ClaimRegistry* const registry = new ClaimRegistry();
  return *registry;
}

// The dynamic type of `cb`, demangled: "graphgc::callbacks::TensorBoard".
std::string TypeName(const Callback& cb) {
  const char* mangled = typeid(cb).name();
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : mangled;
  std::free(demangled);
  return name;
}

}  // namespace

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
absl::Status Callback::Validate() const { return absl::OkStatus(); }

CallbackClaims::~CallbackClaims() { Release(); }

CallbackClaims& CallbackClaims::operator=(CallbackClaims&& other) noexcept {
  if (this != &other) {
    Release();
    claimed_ = std::move(other.claimed_);
    other.claimed_.clear();
  }
  return *this;
}

void CallbackClaims::Release() {
  if (claimed_.empty()) return;
  ClaimRegistry& registry = Claims();
  WriterLock lock(registry.mu);
  for (const std::shared_ptr<Callback>& cb : claimed_) {
    registry.model_of.erase(cb.get());
  }
  claimed_.clear();
}

absl::StatusOr<CallbackClaims> ClaimCallbacks(
    const std::vector<std::shared_ptr<Callback>>& callbacks,
    const std::string& model) {
  CallbackClaims claims;  // releases what it holds on every early return
  absl::Status refused;
  {
    ClaimRegistry& registry = Claims();
    WriterLock lock(registry.mu);
    for (const std::shared_ptr<Callback>& cb : callbacks) {
      if (cb == nullptr ||
          std::find(claims.claimed_.begin(), claims.claimed_.end(), cb) !=
              claims.claimed_.end()) {
        continue;
      }
      auto [it, inserted] = registry.model_of.emplace(cb.get(), model);
      if (!inserted) {
        refused = absl::FailedPreconditionError(
            absl::StrCat("Fit of '", model, "': callback ", TypeName(*cb),
                         " is already in use by a running fit of model '",
                         it->second, "'; a callback serves one fit at a time"));
        break;
      }
      claims.claimed_.push_back(cb);
    }
  }
  GG_RETURN_IF_ERROR(refused);
  for (const std::shared_ptr<Callback>& cb : claims.claimed_) {
    GG_RETURN_IF_ERROR(cb->Validate());
  }
  return claims;
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
  return std::make_shared<ProgressBar>(std::move(options));
}

ProgressBar::ProgressBar(ProgressBarOptions options)
    : options_(std::move(options)) {
  redraw_ = options_.redraw >= 0 ? options_.redraw != 0
                                 : isatty(fileno(options_.out)) != 0;
}

absl::Time ProgressBar::Now() const {
  return options_.clock ? options_.clock() : absl::Now();
}

absl::Status ProgressBar::OnTrainBegin(const Sequential&,
                                       const TrainInfo& info) {
  info_ = info;
  return absl::OkStatus();
}

absl::Status ProgressBar::OnEpochBegin(int epoch) {
  steps_ = 0;
  seen_ = 0;
  metric_sums_.clear();
  epoch_logs_.clear();
  epoch_start_ = Now();
  after_first_step_.reset();
  last_draw_.reset();
  drawn_width_ = 0;
  std::fprintf(options_.out, "Epoch %d/%d\n", epoch + 1, info_.epochs);
  return absl::OkStatus();
}

absl::Status ProgressBar::OnBatchEnd(int64_t, const Logs& logs) {
  auto size_it = logs.find("size");
  const double size = size_it == logs.end() ? 0 : size_it->second;
  ++steps_;
  seen_ += static_cast<int64_t>(size);
  for (const auto& [key, value] : logs) {
    if (key != "size") metric_sums_[key] += value * size;
  }
  const absl::Time now = Now();
  if (steps_ == 1) after_first_step_ = now;
  if (redraw_ && (!last_draw_.has_value() ||
                  now - *last_draw_ >= absl::Milliseconds(50))) {
    last_draw_ = now;
    Draw(false);
  }
  return absl::OkStatus();
}

absl::Status ProgressBar::OnEpochEnd(int, const Logs& logs) {
  epoch_logs_ = logs;
  if (redraw_) {
    Draw(true);
  } else {
    std::fprintf(options_.out, "%s\n", Format(true, false).c_str());
  }
  std::fflush(options_.out);
  return absl::OkStatus();
}

void ProgressBar::Draw(bool final) {
  const std::string plain = Format(final, false);
  // Columns: UTF-8 code points (every "━" is three bytes, one column).
  const size_t width = static_cast<size_t>(std::count_if(
      plain.begin(), plain.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  std::string line = "\r" + Format(final, true);
  if (drawn_width_ > width) line += std::string(drawn_width_ - width, ' ');
  drawn_width_ = width;
  if (final) line += "\n";
  std::fputs(line.c_str(), options_.out);
  std::fflush(options_.out);
}

std::string ProgressBar::Line(bool final) const { return Format(final, false); }

namespace {

// Keras's Progbar._format_time: " 2ms/step".
std::string PerStep(double seconds) {
  if (seconds >= 1 || seconds == 0) {
    return absl::StrFormat(" %.0fs/step", seconds);
  }
  if (seconds >= 1e-3) return absl::StrFormat(" %.0fms/step", seconds * 1e3);
  return absl::StrFormat(" %.0fus/step", seconds * 1e6);
}

// Keras's ETA: "1:02:03", "2:05" or "7s" (whole seconds, truncated).
std::string Eta(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds);
  if (seconds > 3600) {
    return absl::StrFormat("%d:%02d:%02d", s / 3600, (s % 3600) / 60, s % 60);
  }
  if (seconds > 60) return absl::StrFormat("%d:%02d", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

}  // namespace

std::string ProgressBar::Format(bool final, bool ansi) const {
  const int64_t target = std::max<int64_t>(info_.steps_per_epoch, 1);
  const int64_t current = final ? std::max(steps_, target) : steps_;
  const int digits = static_cast<int>(absl::StrCat(target).size());
  constexpr int kWidth = 20;
  constexpr absl::string_view kCell = "━";
  const int64_t filled = std::min<int64_t>(kWidth, kWidth * current / target);
  std::string count = absl::StrFormat("%*d/%d", digits, current, target);
  std::string done, rest;
  for (int64_t i = 0; i < filled; ++i) absl::StrAppend(&done, kCell);
  for (int64_t i = filled; i < kWidth; ++i) absl::StrAppend(&rest, kCell);
  std::string line;
  if (ansi) {
    line = absl::StrCat("\x1b[1m", count, "\x1b[0m ");
    if (!done.empty()) absl::StrAppend(&line, "\x1b[32m", done, "\x1b[0m");
    absl::StrAppend(&line, "\x1b[37m", rest, "\x1b[0m");
  } else {
    line = absl::StrCat(count, " ", done, rest);
  }
  // Time per step leaves out the first one, as Keras's estimate does.
  const absl::Time now = Now();
  double per_step = 0;
  if (steps_ > 1 && after_first_step_.has_value()) {
    per_step = absl::ToDoubleSeconds(now - *after_first_step_) /
               static_cast<double>(steps_ - 1);
  } else if (steps_ > 0) {
    per_step =
        absl::ToDoubleSeconds(now - epoch_start_) / static_cast<double>(steps_);
  }
  const std::string time =
      final
          ? absl::StrFormat("%.0fs", absl::ToDoubleSeconds(now - epoch_start_))
          : Eta(per_step * static_cast<double>(target - current));
  absl::StrAppend(&line, " ", ansi ? "\x1b[1m" : "", time,
                  ansi ? "\x1b[0m" : "", PerStep(per_step));
  if (final && !epoch_logs_.empty()) {
    // Training metrics first, then validation ones, as Keras orders them.
    for (bool val : {false, true}) {
      for (const auto& [key, value] : epoch_logs_) {
        if ((key.rfind("val_", 0) == 0) != val) continue;
        absl::StrAppend(&line, " - ", key, ": ", FormatValue(value));
      }
    }
  } else if (seen_ > 0) {
    for (const auto& [key, sum] : metric_sums_) {
      absl::StrAppend(&line, " - ", key, ": ",
                      FormatValue(sum / static_cast<double>(seen_)));
    }
  }
  return line;
}

std::shared_ptr<TerminateOnNaN> TerminateOnNaN::Create() {
  return std::make_shared<TerminateOnNaN>();
}

absl::Status TerminateOnNaN::OnEpochBegin(int epoch) {
  epoch_ = epoch;
  return absl::OkStatus();
}

absl::Status TerminateOnNaN::OnBatchEnd(int64_t batch, const Logs& logs) {
  auto it = logs.find("loss");
  if (it != logs.end() && !std::isfinite(it->second)) {
    return absl::FailedPreconditionError(
        absl::StrCat("TerminateOnNaN: loss is ", it->second, " at batch ",
                     batch, " of epoch ", epoch_ + 1, "; training stopped"));
  }
  return absl::OkStatus();
}

std::shared_ptr<TensorBoard> TensorBoard::Create(TensorBoardOptions options) {
  return std::make_shared<TensorBoard>(std::move(options));
}

TensorBoard::TensorBoard(TensorBoardOptions options)
    : options_(std::move(options)),
      owner_(absl::StrCat("TensorBoard '", options_.log_dir, "'")) {}

TensorBoard::~TensorBoard() = default;

absl::Status TensorBoard::Validate() const {
  if (options_.log_dir.empty()) {
    return absl::InvalidArgumentError(
        "TensorBoard: log_dir is empty; it would write to /train at the "
        "filesystem root. Give a directory, e.g. \"logs\"");
  }
  return CheckPath(options_.log_dir, "TensorBoard log_dir");
}

namespace {

// Keras's keras_model_summary("keras", model, step=0): the config JSON as a
// scalar string tensor, for TensorBoard's graph plugin (content "1" is the
// plugin data version it expects).
proto::Event KerasModelEvent(const std::string& config_json) {
  proto::Event event;
  event.set_step(0);
  proto::Summary::Value* value = event.mutable_summary()->add_value();
  value->set_tag("keras");
  proto::SummaryMetadata::PluginData* plugin =
      value->mutable_metadata()->mutable_plugin_data();
  plugin->set_plugin_name("graph_keras_model");
  plugin->set_content("1");
  proto::TensorProto* tensor = value->mutable_tensor();
  tensor->set_dtype(proto::DT_STRING);
  tensor->mutable_tensor_shape();  // a scalar
  tensor->add_string_val(config_json);
  return event;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EventFileWriter>> TensorBoard::Open(
    const std::string& subdir, int64_t* graph_nodes) const {
  GG_ASSIGN_OR_RETURN(std::unique_ptr<EventFileWriter> writer,
                      EventFileWriter::Create(options_.log_dir + subdir));
  if (graph_def_ != nullptr && subdir == "/train") {
    GG_RETURN_IF_ERROR(writer->WriteGraph(*graph_def_));
    if (graph_nodes != nullptr) *graph_nodes = graph_def_->node_size();
    GG_RETURN_IF_ERROR(writer->WriteEvent(KerasModelEvent(keras_config_)));
  }
  GG_RETURN_IF_ERROR(writer->Flush());
  return writer;
}

absl::Status TensorBoard::ReopenIfRemoved(
    std::unique_ptr<EventFileWriter>& writer, std::string& path,
    const std::string& subdir) {
  if (writer == nullptr) return absl::OkStatus();
  std::error_code ec;
  if (std::filesystem::exists(path, ec) || ec) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<EventFileWriter>> fresh = Open(subdir);
  if (!fresh.ok()) {
    return Annotate(
        fresh.status(),
        absl::StrCat("TensorBoard: events file '", path,
                     "' was removed mid-run and cannot be replaced"));
  }
  writer->Close().IgnoreError();  // the file is gone; its errors are moot
  absl::FPrintF(stderr,
                "TensorBoard: events file %s was removed mid-run; events "
                "written to it are lost, continuing in %s\n",
                path, (*fresh)->path());
  writer = *std::move(fresh);
  path = writer->path();
  ++files_reopened_;
  return absl::OkStatus();
}

absl::Status TensorBoard::OnTrainBegin(const Sequential& model,
                                       const TrainInfo& info) {
  GG_RETURN_IF_ERROR(Validate());  // for callers other than Fit
  batches_ = 0;
  exported_.clear();
  graph_def_.reset();
  keras_config_.clear();
  graph_nodes_ = 0;
  if (options_.write_graph) {
    std::vector<NodeHandle> roots;
    for (const NodeHandle& h : model.GraphRoots()) {
      roots.push_back(h.WithOwner(owner_));
    }
    exported_ = std::move(roots);
    GG_ASSIGN_OR_RETURN(proto::GraphDef graph_def, ExportGraphDef(exported_));
    // The config names the model and layers as the graph beside it does.
    const ScopeRenaming renaming = LocalizeScopeNames(graph_def);
    GG_ASSIGN_OR_RETURN(keras_config_, ModelToJson(model, renaming));
    graph_def_ = std::make_shared<const proto::GraphDef>(std::move(graph_def));
  }
  train_.reset();
  validation_.reset();
  validation_path_.clear();
  GG_ASSIGN_OR_RETURN(train_, Open("/train", &graph_nodes_));
  train_path_ = train_->path();
  if (info.has_validation) {
    GG_ASSIGN_OR_RETURN(validation_, Open("/validation"));
    validation_path_ = validation_->path();
  }
  return absl::OkStatus();
}

absl::Status TensorBoard::OnBatchEnd(int64_t, const Logs& logs) {
  ++batches_;
  if (train_ == nullptr || options_.update_freq <= 0 ||
      batches_ % options_.update_freq != 0) {
    return absl::OkStatus();
  }
  auto it = logs.find("loss");
  if (it == logs.end()) return absl::OkStatus();
  GG_RETURN_IF_ERROR(ReopenIfRemoved(train_, train_path_, "/train"));
  return train_->WriteScalar("batch_loss", batches_, it->second);
}

absl::Status TensorBoard::OnEpochEnd(int epoch, const Logs& logs) {
  if (train_ == nullptr) return absl::OkStatus();
  GG_RETURN_IF_ERROR(ReopenIfRemoved(train_, train_path_, "/train"));
  GG_RETURN_IF_ERROR(
      ReopenIfRemoved(validation_, validation_path_, "/validation"));
  for (const auto& [key, value] : logs) {
    const bool val = key.rfind("val_", 0) == 0;
    EventFileWriter* writer = val ? validation_.get() : train_.get();
    if (writer == nullptr) continue;
    const std::string metric = val ? key.substr(4) : key;
    const std::string tag =
        absl::StrCat("epoch_", metric == "acc" ? "accuracy" : metric);
    GG_RETURN_IF_ERROR(writer->WriteScalar(tag, epoch, value));
  }
  GG_RETURN_IF_ERROR(train_->Flush());
  if (validation_ != nullptr) GG_RETURN_IF_ERROR(validation_->Flush());
  return absl::OkStatus();
}

absl::Status TensorBoard::OnTrainEnd(const Logs&) {
  absl::Status s = absl::OkStatus();
  if (train_ != nullptr) s.Update(train_->Close());
  if (validation_ != nullptr) s.Update(validation_->Close());
  train_.reset();
  validation_.reset();
  return s;
}

namespace {

// "max" / "min" for `mode` of a callback watching `monitor`.
bool IsMaxMode(const std::string& mode, const std::string& monitor) {
  if (mode == "max") return true;
  if (mode == "min") return false;
  return monitor.find("acc") != std::string::npos;  // "auto", as Keras
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

// The monitored value, or InvalidArgument naming the monitor and the keys
// the logs have.
absl::StatusOr<float> Monitored(const std::string& who,
                                const std::string& monitor, int epoch,
                                const Logs& logs) {
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

}  // namespace

std::shared_ptr<EarlyStopping> EarlyStopping::Create(
    EarlyStoppingOptions options) {
  return std::make_shared<EarlyStopping>(std::move(options));
}

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)) {}

absl::Status EarlyStopping::Validate() const {
  GG_RETURN_IF_ERROR(
      CheckMonitorAndMode("EarlyStopping", options_.monitor, options_.mode));
  if (options_.patience < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EarlyStopping: patience must be >= 0, got ", options_.patience));
  }
  if (std::isnan(options_.min_delta)) {
    return absl::InvalidArgumentError("EarlyStopping: min_delta is NaN");
  }
  return absl::OkStatus();
}

absl::Status EarlyStopping::OnTrainBegin(const Sequential& model,
                                         const TrainInfo&) {
  GG_RETURN_IF_ERROR(Validate());  // for callers other than Fit
  model_ = &model;
  wait_ = 0;
  stopped_epoch_ = 0;
  best_epoch_ = 0;
  best_.reset();
  best_weights_.clear();
  have_best_weights_ = false;
  return absl::OkStatus();
}

absl::Status EarlyStopping::OnEpochEnd(int epoch, const Logs& logs) {
  GG_ASSIGN_OR_RETURN(
      const float current,
      Monitored("EarlyStopping", options_.monitor, epoch, logs));
  if (model_ == nullptr) {
    return absl::FailedPreconditionError(
        "EarlyStopping: OnEpochEnd before OnTrainBegin");
  }
  if (options_.restore_best_weights && !have_best_weights_) {
    // Never improved yet: the current weights count as the best.
    best_weights_ = model_->GetWeights();
    have_best_weights_ = true;
    best_epoch_ = epoch;
  }
  ++wait_;
  const double delta = std::fabs(static_cast<double>(options_.min_delta));
  const bool max = IsMaxMode(options_.mode, options_.monitor);
  // Keras: monitor_op(current - min_delta, best), min_delta negated in min
  // mode; NaN never improves.
  const bool improved = !best_.has_value() ||
                        (max ? static_cast<double>(current) - delta > *best_
                             : static_cast<double>(current) + delta < *best_);
  if (improved) {
    best_ = current;
    best_epoch_ = epoch;
    if (options_.restore_best_weights) {
      best_weights_ = model_->GetWeights();
      have_best_weights_ = true;
    }
    wait_ = 0;
    return absl::OkStatus();
  }
  if (wait_ >= options_.patience && epoch > 0) {
    stopped_epoch_ = epoch;
    Sequential(*model_).StopTraining();
  }
  return absl::OkStatus();
}

absl::Status EarlyStopping::OnTrainEnd(const Logs&) {
  const Sequential* model = model_;
  model_ = nullptr;
  if (!options_.restore_best_weights || !have_best_weights_ ||
      model == nullptr) {
    return absl::OkStatus();
  }
  if (best_weights_.empty()) {
    return absl::InternalError(
        "EarlyStopping: the best epoch's weights could not be read, so they "
        "cannot be restored");
  }
  Sequential target(*model);
  absl::Status s = target.SetWeights(best_weights_);
  if (!s.ok()) {
    return Annotate(
        s, absl::StrCat("EarlyStopping: restoring the weights of epoch ",
                        best_epoch_ + 1));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<CSVLogger>> CSVLogger::Create(std::string path) {
  GG_RETURN_IF_ERROR(CheckPath(path, "CSVLogger path"));
  return std::shared_ptr<CSVLogger>(new CSVLogger(std::move(path)));
}

CSVLogger::CSVLogger(std::string path) : path_(std::move(path)) {}

CSVLogger::~CSVLogger() {
  if (sink_ != nullptr) sink_->Close().IgnoreError();  // a failed fit's file
}

std::string CSVLogger::FormatValue(float value) {
  const double v = value;
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Python's repr: the shortest digits that round-trip, fixed notation for
  // exponents in [-4, 16), otherwise "<d>[.<ddd>]e<sign><2+ digits>".
  char buf[64];
  std::to_chars_result r =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  const bool negative = sci[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exp = std::atoi(sci.c_str() + e + 1);
  std::string out = negative ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0." + std::string(-exp - 1, '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out += digits + std::string(exp + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  absl::StrAppendFormat(&out, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  return out;
}

absl::Status CSVLogger::OnTrainBegin(const Sequential&, const TrainInfo&) {
  if (sink_ != nullptr) sink_->Close().IgnoreError();  // an earlier failed fit
  sink_.reset();
  keys_.clear();
  wrote_header_ = false;
  absl::StatusOr<std::unique_ptr<RecordSink>> sink = OpenFileSink(path_);
  if (!sink.ok()) {
    return Annotate(sink.status(),
                    absl::StrCat("CSVLogger: cannot open '", path_, "'"));
  }
  sink_ = *std::move(sink);
  return absl::OkStatus();
}

absl::Status CSVLogger::OnEpochEnd(int epoch, const Logs& logs) {
  if (sink_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CSVLogger '", path_, "': OnEpochEnd before OnTrainBegin"));
  }
  std::string text;
  if (!wrote_header_) {
    for (const auto& [key, value] : logs) keys_.push_back(key);  // sorted
    text = "epoch";
    for (const std::string& key : keys_) {
      // Python's csv quotes a field holding the separator, a quote or a
      // line break, doubling its quotes.
      if (key.find_first_of(",\"\r\n") == std::string::npos) {
        absl::StrAppend(&text, ",", key);
      } else {
        std::string quoted;
        for (char c : key)
          quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
        absl::StrAppend(&text, ",\"", quoted, "\"");
      }
    }
    text += "\r\n";
  }
  absl::StrAppend(&text, epoch);
  for (const std::string& key : keys_) {
    auto it = logs.find(key);
    absl::StrAppend(&text, ",",
                    it == logs.end() ? "NA" : FormatValue(it->second));
  }
  text += "\r\n";
  absl::Status s = sink_->Append(text);
  if (s.ok()) s = sink_->Flush();
  if (!s.ok()) {
    return Annotate(s, absl::StrCat("CSVLogger: writing '", path_, "'"));
  }
  wrote_header_ = true;
  return absl::OkStatus();
}

absl::Status CSVLogger::OnTrainEnd(const Logs&) {
  if (sink_ == nullptr) return absl::OkStatus();
  absl::Status s = sink_->Close();
  sink_.reset();
  if (!s.ok()) {
    return Annotate(s, absl::StrCat("CSVLogger: closing '", path_, "'"));
  }
  return absl::OkStatus();
}

std::shared_ptr<ReduceLROnPlateau> ReduceLROnPlateau::Create(
    ReduceLROnPlateauOptions options) {
  return std::make_shared<ReduceLROnPlateau>(std::move(options));
}

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions options)
    : options_(std::move(options)) {}

absl::Status ReduceLROnPlateau::Validate() const {
  const std::string who = "ReduceLROnPlateau";
  GG_RETURN_IF_ERROR(CheckMonitorAndMode(who, options_.monitor, options_.mode));
  if (!(options_.factor >= 0.f && options_.factor < 1.f)) {
    return absl::InvalidArgumentError(absl::StrCat(
        who,
        ": factor must be in [0, 1) (Keras: a factor >= 1.0 is not "
        "supported), got ",
        options_.factor));
  }
  if (options_.patience < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(who, ": patience must be >= 0, got ", options_.patience));
  }
  if (options_.cooldown < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(who, ": cooldown must be >= 0, got ", options_.cooldown));
  }
  if (!(options_.min_lr >= 0.f) || std::isinf(options_.min_lr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": min_lr must be finite and >= 0, got ", options_.min_lr));
  }
  if (std::isnan(options_.min_delta)) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": min_delta is NaN"));
  }
  return absl::OkStatus();
}

absl::Status ReduceLROnPlateau::OnTrainBegin(const Sequential& model,
                                             const TrainInfo&) {
  GG_RETURN_IF_ERROR(Validate());  // for callers other than Fit
  model_ = &model;
  max_mode_ = IsMaxMode(options_.mode, options_.monitor);
  best_ = max_mode_ ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  wait_ = 0;
  cooldown_counter_ = 0;
  reductions_ = 0;
  return absl::OkStatus();
}

absl::Status ReduceLROnPlateau::OnEpochEnd(int epoch, const Logs& logs) {
  GG_ASSIGN_OR_RETURN(
      const float value,
      Monitored("ReduceLROnPlateau", options_.monitor, epoch, logs));
  if (model_ == nullptr) {
    return absl::FailedPreconditionError(
        "ReduceLROnPlateau: OnEpochEnd before OnTrainBegin");
  }
  const double current = value;
  const double delta = options_.min_delta;
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    wait_ = 0;
  }
  const bool better =
      max_mode_ ? current > best_ + delta : current < best_ - delta;
  if (better) {
    best_ = current;
    wait_ = 0;
    return absl::OkStatus();
  }
  if (cooldown_counter_ > 0) return absl::OkStatus();
  ++wait_;
  if (wait_ < options_.patience) return absl::OkStatus();
  Sequential model(*model_);
  GG_ASSIGN_OR_RETURN(const float old_lr, model.learning_rate());
  if (old_lr > options_.min_lr) {
    const float new_lr = std::max(old_lr * options_.factor, options_.min_lr);
    GG_RETURN_IF_ERROR(model.SetLearningRate(new_lr));
    ++reductions_;
    cooldown_counter_ = options_.cooldown;
    wait_ = 0;
  }
  return absl::OkStatus();
}

absl::Status ReduceLROnPlateau::OnTrainEnd(const Logs&) {
  model_ = nullptr;
  return absl::OkStatus();
}

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
    GG_RETURN_IF_ERROR(
        CheckMonitorAndMode("ModelCheckpoint", options_.monitor, "auto"));
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
  model_ = &model;
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
    // Keras 3: monitor_op(current, best), best starting at +-inf; NaN never
    // improves. Mode "auto", as EarlyStopping's.
    const bool max = IsMaxMode("auto", options_.monitor);
    const double inf = std::numeric_limits<double>::infinity();
    const double best =
        best_.has_value() ? static_cast<double>(*best_) : (max ? -inf : inf);
    const double value = current;
    if (!(max ? value > best : value < best)) return absl::OkStatus();
    improved = current;
  }
  const absl::Status s = options_.save_weights_only ? SaveWeights(*model_, path)
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
