#include "models/fit.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <random>
#include <system_error>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "models/batches.h"
#include "models/model_data.h"
#include "models/random_seed.h"
#include "models/sample_weights.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

FitRunning::FitRunning(ModelState& m) : m_(m) {
  m.fitting = std::this_thread::get_id();
}

FitRunning::~FitRunning() {
  {
    WriterLock lock(m_.mu);
    m_.fitting.reset();
  }
  m_.fit_ended.SignalAll();
}

namespace {

// Calls `hook` on every callback of the fit, in order, up to the first
// error.
template <typename Hook>
absl::Status Dispatch(FitRun& r, Hook&& hook) {
  for (auto& cb : r.callbacks) GG_RETURN_IF_ERROR(hook(*cb));
  return absl::OkStatus();
}

// `v` as Python's repr writes a float (0.1, 1.0, 1e-05), for Keras's
// message.
std::string PythonRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  const bool sci = a != 0 && (a < 1e-4 || a >= 1e16);
  char buf[400];  // the longest fixed double fits
  const std::to_chars_result r = std::to_chars(
      buf, buf + sizeof buf, v,
      sci ? std::chars_format::scientific : std::chars_format::fixed);
  std::string out(buf, r.ec == std::errc() ? r.ptr : buf);
  if (!sci && out.find('.') == std::string::npos) out += ".0";
  return out;
}

// initial_epoch, steps_per_epoch, validation_steps, validation_batch_size,
// validation_freq and the weights' arguments.
absl::Status CheckScheduleOptions(const FitOptions& o,
                                  const std::string& where) {
  auto refuse = [&](const std::string& what, int64_t got) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", what, ", got ", got));
  };
  if (o.initial_epoch < 0) {
    return refuse("initial_epoch must be >= 0", o.initial_epoch);
  }
  if (o.steps_per_epoch < 0) {
    return refuse("steps_per_epoch must be >= 1 (or 0 for a whole pass)",
                  o.steps_per_epoch);
  }
  if (o.validation_steps < 0) {
    return refuse("validation_steps must be >= 1 (or 0 for a whole pass)",
                  o.validation_steps);
  }
  if (o.validation_batch_size < 0) {
    return refuse("validation_batch_size must be >= 1 (or 0 for batch_size)",
                  o.validation_batch_size);
  }
  if (o.validation_epochs.empty() && o.validation_freq < 1) {
    return refuse("validation_freq must be >= 1", o.validation_freq);
  }
  if (o.sample_weight.has_value() && !o.class_weight.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where,
                     ": You cannot `class_weight` and `sample_weight` at the "
                     "same time."));
  }
  return absl::OkStatus();
}

// Keras's warnings go to History::warnings, each once.
void Warn(FitRun& r, const std::string& text) {
  std::vector<std::string>& w = r.history.warnings;
  if (std::find(w.begin(), w.end(), text) == w.end()) w.push_back(text);
}

int64_t Batches(int64_t rows, int batch_size) {
  return (rows + batch_size - 1) / batch_size;
}

// After the split: class_weight's weights, and the batches each epoch and
// each validation run.
absl::Status TakeWeights(FitRun& r) {
  const FitOptions& o = r.options;
  if (!o.class_weight.empty()) {
    // Keras 3 takes class_weight for one output only.
    if (r.m.outputs.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(r.where,
                       ": `class_weight` is only supported for Models with a "
                       "single output."));
    }
    // Validation stays unweighted, as Keras's.
    if (r.val_samples > 0) r.split_unweighted = r.data;
    GG_ASSIGN_OR_RETURN(
        r.data.sample_weight,
        ClassWeightsToSampleWeights(r.data.labels[0], o.class_weight, r.where));
  }
  r.train_steps.emplace(Batches(r.samples, o.batch_size), o.steps_per_epoch);
  r.val_batch_size =
      o.validation_batch_size > 0 ? o.validation_batch_size : o.batch_size;
  if (r.val_rows > 0) {
    r.val_steps.emplace(Batches(r.val_rows, r.val_batch_size),
                        o.validation_steps);
  }
  return absl::OkStatus();
}

}  // namespace

bool ValidatesAfter(const FitOptions& options, int epoch) {
  const int n = epoch + 1;  // Keras counts these from 1
  if (!options.validation_epochs.empty()) {
    return std::find(options.validation_epochs.begin(),
                     options.validation_epochs.end(),
                     n) != options.validation_epochs.end();
  }
  return n % options.validation_freq == 0;
}

absl::StatusOr<int64_t> SplitForValidation(int64_t samples,
                                           double validation_split,
                                           const std::string& where) {
  if (validation_split == 0) return samples;
  // NaN fails both comparisons.
  if (!(validation_split >= 0 && validation_split <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": validation_split must be in [0, 1), got ",
                     PythonRepr(validation_split)));
  }
  // Keras: split_at = floor(n * (1 - validation_split)), in double; at most
  // n, so the conversion back fits.
  const double at =
      std::floor(static_cast<double>(samples) * (1.0 - validation_split));
  const int64_t split_at =
      at >= static_cast<double>(samples) ? samples : static_cast<int64_t>(at);
  if (split_at == 0 || split_at == samples) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": Training data contains ", samples,
        " samples, which is not sufficient to split it into a validation "
        "and training set as specified by `validation_split=",
        PythonRepr(validation_split),
        "`. Either provide more data, or a different value for the "
        "`validation_split` argument."));
  }
  return split_at;
}

absl::Status ValidateAndClaim(FitRun& r) {
  ModelState& m = r.m;
  const FitOptions& options = r.options;
  m.graph->collector().MaybeCollect();
  r.where = absl::StrCat("Fit of '", m.scope.name(), "'");
  const std::string& where = r.where;
  ModelCall call(m);
  if (m.fitting.has_value()) return InOwnFit(where);  // from its callback
  if (!m.compiled) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": the model is not compiled; call Compile first"));
  }
  if (options.batch_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": batch_size must be >= 1, got ", options.batch_size));
  }
  if (options.epochs < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": epochs must be >= 0, got ", options.epochs));
  }
  if (options.verbose < 0 || options.verbose > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": verbose must be 0, 1 or 2, got ", options.verbose));
  }
  GG_RETURN_IF_ERROR(CheckScheduleOptions(options, where));
  // A copy: the lock is held, but the analysis cannot follow a reference.
  const std::vector<OutputNodes> outputs = m.output_nodes;
  GG_ASSIGN_OR_RETURN(
      r.data, CheckData(m, outputs, r.x, r.y, where, options.sample_weight));
  r.samples = r.data.samples;
  if (r.samples == 0) return NoSamples(where);
  if (options.validation_lists.has_value() ||
      options.validation_data.has_value()) {
    const std::string vwhere = where + " (validation_data)";
    const bool lists = options.validation_lists.has_value();
    GG_ASSIGN_OR_RETURN(
        r.validation,
        CheckData(m, outputs,
                  lists ? options.validation_lists->first
                        : std::vector<Tensor>{options.validation_data->first},
                  lists ? options.validation_lists->second
                        : std::vector<Tensor>{options.validation_data->second},
                  vwhere, options.validation_sample_weight));
    if (r.validation->samples == 0) return NoSamples(vwhere);
    r.val_rows = r.validation->samples;
  } else {
    // Keras: validation_data, when given, overrides validation_split.
    const int64_t n = r.samples;
    GG_ASSIGN_OR_RETURN(r.samples,
                        SplitForValidation(n, options.validation_split, where));
    r.val_samples = n - r.samples;
    r.val_rows = r.val_samples;
  }
  GG_RETURN_IF_ERROR(TakeWeights(r));
  if (const std::optional<LearningRateSchedule>& schedule =
          m.compile.optimizer.learning_rate_schedule;
      schedule.has_value()) {
    GG_ASSIGN_OR_RETURN(
        r.scheduled_rate,
        ScheduledRate::Start(*m.session, *schedule, m.iterations));
    r.rate_read = m.learning_rate.read;
  }
  r.running.emplace(m);
  m.stop_training.store(false);  // Keras: fit() clears stop_training
  r.nodes = CompiledNodesOf(m);
  call.Unlock();
  return absl::OkStatus();
}

absl::Status StartCallbacks(FitRun& r) {
  const FitOptions& options = r.options;
  if (options.verbose > 0) {
    r.callbacks.push_back(callbacks::ProgressBar::Create(
        {.redraw = options.verbose == 1 ? -1 : 0}));
  }
  for (auto& cb : options.callbacks) {
    if (cb != nullptr) r.callbacks.push_back(cb);
  }
  // Held to the end of the fit: no other fit may use these callbacks.
  GG_ASSIGN_OR_RETURN(r.claims, ClaimCallbacks(r.callbacks, r.m.scope.name()));
  const int64_t steps = r.train_steps->target();
  const TrainInfo info{
      .epochs = options.epochs,
      .samples = r.samples,
      .steps_per_epoch = steps,
      .batch_size = options.batch_size,
      .verbose = options.verbose,
      .has_validation = r.validation.has_value() || r.val_samples > 0};
  return Dispatch(r,
                  [&](Callback& cb) { return cb.OnTrainBegin(r.model, info); });
}

void PrepareBatches(FitRun& r) {
  r.order.resize(r.samples);
  r.log_fetches = LogFetchesOf(r.nodes, /*training=*/true);
  r.fetches = r.log_fetches.nodes;
  MetricTotals::AppendFetches(r.nodes.metrics, r.fetches);
  r.metrics = MetricTotals(&r.nodes.metrics);
  // Built once: each step only swaps in its batch, so no node handle is
  // copied (and counted) per step. With a schedule, the last slot is the
  // learning rate's read, which the step's run takes in place of the
  // variable's value.
  r.feeds = FeedSlots(r.m, r.nodes, r.data);
  if (r.scheduled_rate.has_value()) {
    r.feeds.emplace_back(std::piecewise_construct,
                         std::forward_as_tuple(r.rate_read),
                         std::forward_as_tuple());
  }
  r.targets = {r.nodes.train_op};
}

absl::Status RunStep(FitRun& r, int64_t step) {
  ModelState& m = r.m;
  GG_RETURN_IF_ERROR(
      Dispatch(r, [&](Callback& cb) { return cb.OnBatchBegin(step); }));
  const int64_t begin = (r.span.first + step) * r.options.batch_size;
  const int64_t end =
      std::min<int64_t>(r.samples, begin + r.options.batch_size);
  absl::Span<const int64_t> rows(r.order.data() + begin, end - begin);
  GG_RETURN_IF_ERROR(GatherBatchInto(m, r.nodes, r.data, rows, r.feeds));
  // A safe point: nothing of this model is in flight.
  m.graph->collector().MaybeCollect();
  if (r.scheduled_rate.has_value()) {
    GG_ASSIGN_OR_RETURN(const float rate, r.scheduled_rate->NextRate(r.where));
    r.feeds.back().second = Tensor::Scalar<float>(rate);
  }
  GG_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                      m.session->Run(r.feeds, r.fetches, r.targets));
  Logs batch_logs;
  const size_t losses = r.log_fetches.nodes.size();
  for (size_t k = 0; k < losses; ++k) {
    const float value = out[k].data<float>()[0];
    batch_logs[r.log_fetches.keys[k]] = value;
    r.sums[k] += value * (end - begin);
  }
  // The batch's own metric values, which the progress bar averages by size.
  MetricTotals batch(&r.nodes.metrics);
  batch.Add(out, losses);
  batch.Results(batch_logs);
  r.metrics.Add(out, losses);
  batch_logs["size"] = static_cast<float>(end - begin);
  r.seen += end - begin;
  return Dispatch(
      r, [&](Callback& cb) { return cb.OnBatchEnd(step, batch_logs); });
}

void EpochLogs(FitRun& r) {
  r.epoch_logs.clear();
  for (size_t k = 0; k < r.sums.size(); ++k) {
    r.epoch_logs[r.log_fetches.keys[k]] =
        static_cast<float>(r.sums[k] / r.seen);
  }
  r.metrics.Results(r.epoch_logs);
}

absl::Status Validate(FitRun& r, int epoch) {
  if (r.val_rows == 0 || !ValidatesAfter(r.options, epoch)) {
    return absl::OkStatus();
  }
  // This validation's rows: validation_steps' batches, in order.
  const EpochSteps::Span span = r.val_steps->Next();
  if (span.ran_out) Warn(r, kRanOutOfData);
  const int64_t first = span.first * r.val_batch_size;
  const int64_t count =
      std::min<int64_t>(r.val_rows - first, span.count * r.val_batch_size);
  // validation_data's rows from 0; else the held-out rows after the
  // training ones.
  const ModelData& data = r.validation.has_value()         ? *r.validation
                          : r.split_unweighted.has_value() ? *r.split_unweighted
                                                           : r.data;
  const int64_t offset = r.validation.has_value() ? 0 : r.samples;
  GG_ASSIGN_OR_RETURN(Logs val, EvaluateOn(r.m, r.nodes, data, r.val_batch_size,
                                           offset + first, count));
  for (const auto& [key, value] : val) r.epoch_logs["val_" + key] = value;
  return absl::OkStatus();
}

void RecordEpoch(FitRun& r, int epoch) {
  r.history.epoch.push_back(epoch);
  for (const auto& [key, value] : r.epoch_logs) {
    r.history.history[key].push_back(value);
  }
}

absl::Status RunEpoch(FitRun& r, int epoch) {
  r.span = r.train_steps->Next();
  // A new pass over the samples is reordered; without steps_per_epoch each
  // epoch is one.
  if (r.span.new_pass) {
    std::iota(r.order.begin(), r.order.end(), 0);
    if (r.options.shuffle) {
      std::mt19937_64 rng(r.options.seed * 0x9E3779B97F4A7C15ull + epoch);
      std::shuffle(r.order.begin(), r.order.end(), rng);
    }
  }
  if (r.span.ran_out) Warn(r, kRanOutOfData);
  GG_RETURN_IF_ERROR(
      Dispatch(r, [&](Callback& cb) { return cb.OnEpochBegin(epoch); }));
  r.sums.assign(r.log_fetches.nodes.size(), 0.0);
  r.metrics.Reset();
  r.seen = 0;
  for (int64_t step = 0; step < r.span.count; ++step) {
    GG_RETURN_IF_ERROR(RunStep(r, step));
    // Keras: a stop asked for by a batch hook ends the epoch here; the
    // epoch's logs average the batches run.
    if (r.m.stop_training.load()) break;
  }
  EpochLogs(r);
  GG_RETURN_IF_ERROR(Validate(r, epoch));
  RecordEpoch(r, epoch);
  return Dispatch(
      r, [&](Callback& cb) { return cb.OnEpochEnd(epoch, r.epoch_logs); });
}

absl::StatusOr<History> FitModel(ModelState& m, const Sequential& model,
                                 const Tensor& x, const Tensor& y,
                                 FitOptions options) {
  return FitModel(m, model, std::vector<Tensor>{x}, std::vector<Tensor>{y},
                  std::move(options));
}

absl::StatusOr<History> FitModel(ModelState& m, const Sequential& model,
                                 std::vector<Tensor> x, std::vector<Tensor> y,
                                 FitOptions options) {
  if (options.shuffle) options.seed = FitShuffleSeed(options.seed);
  FitRun r(m, model, std::move(x), std::move(y), std::move(options));
  GG_RETURN_IF_ERROR(ValidateAndClaim(r));
  GG_RETURN_IF_ERROR(StartCallbacks(r));
  PrepareBatches(r);
  for (int epoch = r.options.initial_epoch;
       epoch < r.options.epochs && !m.stop_training.load(); ++epoch) {
    GG_RETURN_IF_ERROR(RunEpoch(r, epoch));
  }
  GG_RETURN_IF_ERROR(
      Dispatch(r, [&](Callback& cb) { return cb.OnTrainEnd(r.epoch_logs); }));
  return std::move(r.history);
}

}  // namespace models_internal
}  // namespace graphgc
