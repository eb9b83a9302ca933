#include "models/callbacks.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <typeinfo>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/sequential.h"
#include "serialize/event_file.h"
#include "serialize/graph_def.h"
#include "util/file.h"
#include "util/mutex.h"
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

absl::Status TensorBoard::Validate() const {
  if (options_.log_dir.empty()) {
    return absl::InvalidArgumentError(
        "TensorBoard: log_dir is empty; it would write to /train at the "
        "filesystem root. Give a directory, e.g. \"logs\"");
  }
  return CheckPath(options_.log_dir, "TensorBoard log_dir");
}

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
