#include "models/callbacks/logging.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "models/callbacks/model_access.h"
#include "serialize/event.pb.h"
#include "serialize/event_file.h"
#include "serialize/graph_def.h"
#include "serialize/summary.pb.h"
#include "serialize/tensor.pb.h"
#include "serialize/tfrecord.h"
#include "util/file.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
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

void ProgressBar::Reset() {
  steps_ = 0;
  seen_ = 0;
  metric_sums_.clear();
  epoch_logs_.clear();
  epoch_start_ = Now();
  after_first_step_.reset();
  last_draw_.reset();
  drawn_width_ = 0;
}

absl::Status ProgressBar::OnEpochBegin(int epoch) {
  Reset();
  std::fprintf(options_.out, "Epoch %d/%d\n", epoch + 1, info_.epochs);
  return absl::OkStatus();
}

void ProgressBar::BeginRun(int64_t steps, int verbose) {
  info_ = TrainInfo{.epochs = 1, .steps_per_epoch = steps, .verbose = verbose};
  Reset();
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
  if (final && info_.verbose == 2) {
    // Keras 3's verbose=2 line: "32/32 - 0s - 2ms/step - loss: ...".
    line = absl::StrCat(count, " - ", time, " -", PerStep(per_step));
  } else {
    absl::StrAppend(&line, " ", ansi ? "\x1b[1m" : "", time,
                    ansi ? "\x1b[0m" : "", PerStep(per_step));
  }
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

absl::StatusOr<std::shared_ptr<CSVLogger>> CSVLogger::Create(std::string path) {
  GG_RETURN_IF_ERROR(CheckPath(path, "CSVLogger path"));
  return std::shared_ptr<CSVLogger>(new CSVLogger(std::move(path)));
}

CSVLogger::CSVLogger(std::string path) : path_(std::move(path)) {}

CSVLogger::~CSVLogger() {
  if (sink_ != nullptr) sink_->Close().IgnoreError();  // a failed fit's file
}

std::string CSVLogger::FormatValue(float value) { return PythonRepr(value); }

std::string CSVLogger::PythonRepr(double v) {
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
    const std::unique_ptr<CallbackModel> access = CallbackModelOf(model);
    std::vector<NodeHandle> roots;
    for (const NodeHandle& h : access->GraphRoots()) {
      roots.push_back(h.WithOwner(owner_));
    }
    exported_ = std::move(roots);
    GG_ASSIGN_OR_RETURN(proto::GraphDef graph_def, ExportGraphDef(exported_));
    // The config names the model and layers as the graph beside it does.
    const ScopeRenaming renaming = LocalizeScopeNames(graph_def);
    GG_ASSIGN_OR_RETURN(keras_config_, access->KerasConfigJson(renaming));
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

}  // namespace callbacks
}  // namespace graphgc
