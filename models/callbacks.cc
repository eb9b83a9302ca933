#include "models/callbacks.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/sequential.h"
#include "serialize/event_file.h"
#include "serialize/graph_def.h"
#include "util/status_macros.h"

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

absl::StatusOr<std::unique_ptr<EventFileWriter>> TensorBoard::Open(
    const std::string& subdir, int64_t* graph_nodes) const {
  GG_ASSIGN_OR_RETURN(std::unique_ptr<EventFileWriter> writer,
                      EventFileWriter::Create(options_.log_dir + subdir));
  if (options_.write_graph && subdir == "/train") {
    GG_ASSIGN_OR_RETURN(tensorflow::GraphDef graph_def,
                        ExportGraphDef(exported_, {.local_scope_names = true}));
    GG_RETURN_IF_ERROR(writer->WriteGraph(graph_def));
    if (graph_nodes != nullptr) *graph_nodes = graph_def.node_size();
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
    return absl::Status(
        fresh.status().code(),
        absl::StrCat("TensorBoard: events file '", path,
                     "' was removed mid-run and cannot be replaced: ",
                     fresh.status().message()));
  }
  writer->Close().IgnoreError();  // the file is gone; its errors are moot
  absl::FPrintF(stderr,
                "TensorBoard: events file %s was removed mid-run; events "
                "written to it are lost, continuing in %s\n",
                path, (*fresh)->path());
  writer = std::move(fresh).value();
  path = writer->path();
  ++files_reopened_;
  return absl::OkStatus();
}

absl::Status TensorBoard::OnTrainBegin(const Sequential& model,
                                       const TrainInfo& info) {
  batches_ = 0;
  exported_.clear();
  graph_nodes_ = 0;
  if (options_.write_graph) {
    std::vector<NodeHandle> roots;
    for (const NodeHandle& h : model.GraphRoots()) {
      roots.push_back(h.WithOwner(owner_));
    }
    exported_ = std::move(roots);
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
