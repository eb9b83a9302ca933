// tools/grid_search_lib.cc
#include "tools/grid_search_lib.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "serialize/hparams_summary.h"
#include "tools/consecutive_models_lib.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace graphgc::grid {
namespace {

static_assert(std::is_trivially_copyable_v<TrialResult>);
static_assert(std::is_trivially_copyable_v<ProcessStats>);

constexpr int64_t kMaxUnits = 65536;
constexpr int kMaxBatch = 65536;

// SplitMix64: a well-mixed 64-bit value from `x`, never 0 after the fix-up
// (a 0 seed means "draw one" to the layers).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x == 0 ? 1 : x;
}

double NowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

absl::Status Prefixed(const absl::Status& s, absl::string_view prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, ": ", s.message()));
}

template <typename T, typename Parse>
absl::Status ParseList(absl::string_view key, absl::string_view values,
                       std::vector<T>* out, Parse parse) {
  std::vector<T> parsed;
  for (absl::string_view v : absl::StrSplit(values, ',')) {
    v = absl::StripAsciiWhitespace(v);
    T value{};
    if (v.empty() || !parse(v, &value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          key, ": '", v, "' is not a valid value (list: '", values, "')"));
    }
    parsed.push_back(value);
  }
  *out = std::move(parsed);
  return absl::OkStatus();
}

std::string Number(double v) { return absl::StrFormat("%g", v); }

std::string Duration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  if (s >= 3600) {
    return absl::StrFormat("%dh%02dm%02ds", s / 3600, s / 60 % 60, s % 60);
  }
  return absl::StrFormat("%dm%02ds", s / 60, s % 60);
}

}  // namespace

absl::Status GridSpec::Set(absl::string_view key, absl::string_view values) {
  if (key == "architecture") {
    return ParseList(key, values, &architectures,
                     [](absl::string_view v, std::string* out) {
                       *out = std::string(v);
                       return v == "dense" || v == "conv";
                     });
  }
  if (key == "units") {
    return ParseList(
        key, values, &units, [](absl::string_view v, int64_t* out) {
          return absl::SimpleAtoi(v, out) && *out >= 1 && *out <= kMaxUnits;
        });
  }
  if (key == "dropout") {
    return ParseList(key, values, &dropouts,
                     [](absl::string_view v, double* out) {
                       return absl::SimpleAtod(v, out) && *out >= 0 && *out < 1;
                     });
  }
  if (key == "learning_rate") {
    return ParseList(
        key, values, &learning_rates, [](absl::string_view v, double* out) {
          return absl::SimpleAtod(v, out) && std::isfinite(*out) && *out > 0;
        });
  }
  if (key == "batch_size") {
    return ParseList(
        key, values, &batch_sizes, [](absl::string_view v, int* out) {
          return absl::SimpleAtoi(v, out) && *out >= 1 && *out <= kMaxBatch;
        });
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown grid key '", key,
      "' (architecture, units, dropout, learning_rate, batch_size)"));
}

absl::StatusOr<GridSpec> ParseGridText(absl::string_view text,
                                       absl::string_view source) {
  GridSpec spec;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_number, ": expected 'key = v1, v2'"));
    }
    absl::Status s = spec.Set(absl::StripAsciiWhitespace(line.substr(0, eq)),
                              absl::StripAsciiWhitespace(line.substr(eq + 1)));
    if (!s.ok()) return Prefixed(s, absl::StrCat(source, ":", line_number));
  }
  return spec;
}

std::vector<Config> Expand(const GridSpec& spec) {
  std::vector<Config> out;
  for (const std::string& a : spec.architectures) {
    for (int64_t u : spec.units) {
      for (double d : spec.dropouts) {
        for (double lr : spec.learning_rates) {
          for (int b : spec.batch_sizes) {
            out.push_back({a, u, d, lr, b});
          }
        }
      }
    }
  }
  return out;
}

absl::StatusOr<int64_t> CountTrials(const GridSpec& spec, int folds,
                                    int64_t max_trials) {
  if (folds < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("folds must be at least 1, got ", folds));
  }
  const size_t sizes[] = {
      spec.architectures.size(), spec.units.size(),
      spec.dropouts.size(),      spec.learning_rates.size(),
      spec.batch_sizes.size(),   static_cast<size_t>(folds)};
  int64_t trials = 1;
  bool overflow = false;
  for (size_t n : sizes) {
    overflow = overflow || n > static_cast<size_t>(INT64_MAX) ||
               __builtin_mul_overflow(trials, static_cast<int64_t>(n), &trials);
  }
  if (overflow) {
    return absl::InvalidArgumentError(
        absl::StrCat("the grid has more than 2^63 trials; at most ", max_trials,
                     " are allowed (--max_trials)"));
  }
  if (trials > max_trials) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the grid has ", trials / folds, " configurations x ", folds,
        " folds = ", trials, " trials, over the maximum of ", max_trials,
        " (--max_trials)"));
  }
  return trials;
}

absl::Status CheckLabels(const std::vector<int32_t>& labels,
                         int32_t max_classes) {
  if (max_classes < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_classes must be at least 2, got ", max_classes));
  }
  size_t largest_row = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= max_classes) {
      return absl::InvalidArgumentError(
          absl::StrCat("data row ", i + 1, ": label ", labels[i],
                       " is not in [0, ", max_classes,
                       ") (--max_classes: the output layer has one unit per "
                       "class)"));
    }
    if (labels[i] > labels[largest_row]) largest_row = i;
  }
  if (labels.empty()) return absl::OkStatus();
  const int64_t classes = int64_t{labels[largest_row]} + 1;
  std::vector<bool> seen(static_cast<size_t>(classes), false);
  int64_t distinct = 0;
  for (int32_t label : labels) {
    if (!seen[label]) ++distinct;
    seen[label] = true;
  }
  constexpr int64_t kSmallLayer = 16;
  if (classes > kSmallLayer && 2 * distinct < classes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data row ", largest_row + 1, ": label ", classes - 1, " asks for ",
        classes, " classes but only ", distinct,
        " distinct labels occur (at least half of 0..max must): the labels "
        "do not look like class ids"));
  }
  return absl::OkStatus();
}

absl::Status CheckOutputPath(const std::string& path, absl::string_view what,
                             OutputKind kind) {
  GG_RETURN_IF_ERROR(
      CheckPath(path, std::string_view(what.data(), what.size())));
  namespace fs = std::filesystem;
  auto refuse = [&](absl::string_view why) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", path, ": ", why));
  };
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st)) {
    if (kind == OutputKind::kDirectory && !fs::is_directory(st)) {
      return refuse("exists and is not a directory");
    }
    if (kind == OutputKind::kFile && fs::is_directory(st)) {
      return refuse("is a directory, not a file");
    }
    if (::access(path.c_str(), W_OK) != 0) return refuse("is not writable");
    return absl::OkStatus();
  }
  // Not there yet: the nearest existing ancestor must be a writable
  // directory for it to be created.
  fs::path ancestor = fs::path(path).lexically_normal().parent_path();
  if (ancestor.empty()) ancestor = ".";
  while (!fs::exists(ancestor, ec) && ancestor.has_parent_path() &&
         ancestor.parent_path() != ancestor) {
    ancestor = ancestor.parent_path();
  }
  // A relative path whose first component is missing: created under ".".
  if (!fs::exists(ancestor, ec) && ancestor.is_relative()) ancestor = ".";
  if (!fs::is_directory(ancestor, ec)) {
    return refuse(absl::StrCat("cannot be created: ", ancestor.string(),
                               " is not a directory"));
  }
  if (::access(ancestor.c_str(), W_OK | X_OK) != 0) {
    return refuse(absl::StrCat("cannot be created: ", ancestor.string(),
                               " is not writable"));
  }
  return absl::OkStatus();
}

std::string ConfigLabel(const Config& c) {
  return absl::StrCat(c.architecture, " u", c.units, " d", Number(c.dropout),
                      " lr", Number(c.learning_rate), " b", c.batch_size);
}

absl::StatusOr<std::vector<int>> StratifiedFolds(
    const std::vector<int32_t>& labels, int folds, uint64_t seed) {
  if (folds < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("folds must be at least 2, got ", folds));
  }
  if (labels.size() < static_cast<size_t>(folds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot split ", labels.size(), " rows into ", folds, " folds"));
  }
  std::map<int32_t, std::vector<int>> by_class;
  for (size_t i = 0; i < labels.size(); ++i) {
    by_class[labels[i]].push_back(static_cast<int>(i));
  }
  std::vector<int> fold(labels.size(), 0);
  std::mt19937_64 rng(Mix(seed));
  int next = 0;
  for (auto& [label, rows] : by_class) {
    std::shuffle(rows.begin(), rows.end(), rng);
    for (int row : rows) {
      fold[row] = next;
      next = (next + 1) % folds;
    }
  }
  return fold;
}

absl::StatusOr<GridSearch> GridSearch::Create(data::CsvDataset data,
                                              std::vector<Config> configs,
                                              SearchOptions options) {
  if (options.max_epochs < 1 || options.patience < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_epochs must be >= 1 and patience >= 0, got ",
                     options.max_epochs, " and ", options.patience));
  }
  if (configs.empty()) {
    return absl::InvalidArgumentError("the grid has no configuration");
  }
  if (data.rows < 1 || data.features < 1 ||
      data.x.size() != static_cast<size_t>(data.rows * data.features) ||
      data.labels.size() != static_cast<size_t>(data.rows)) {
    return absl::InvalidArgumentError("the dataset is empty or inconsistent");
  }
  GG_RETURN_IF_ERROR(CheckLabels(data.labels, options.max_classes));
  const int32_t largest =
      *std::max_element(data.labels.begin(), data.labels.end());
  if (data.num_classes != largest + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the dataset says ", data.num_classes,
                     " classes but its largest label is ", largest));
  }
  if (data.num_classes < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the dataset needs at least 2 classes, has ", data.num_classes));
  }
  if (options.max_trials < 1 || options.max_trials > INT32_MAX ||
      configs.size() > static_cast<size_t>(options.max_trials) ||
      static_cast<int64_t>(configs.size()) * std::max(options.folds, 0) >
          options.max_trials) {
    return absl::InvalidArgumentError(
        absl::StrCat(configs.size(), " configurations x ", options.folds,
                     " folds is over the maximum of ", options.max_trials,
                     " trials (max_trials, at most 2^31 - 1)"));
  }
  if (!options.image_shape.empty()) {
    int64_t product = 1;
    for (int64_t d : options.image_shape) {
      if (d < 1 || d > data.features) {
        return absl::InvalidArgumentError(
            absl::StrCat("image_shape: dimension ", d, " out of range"));
      }
      product *= d;
      if (product > data.features) break;
    }
    if (options.image_shape.size() != 3 || product != data.features) {
      return absl::InvalidArgumentError(absl::StrCat(
          "image_shape must be height,width,channels with a product of ",
          data.features, " (the feature count), got ",
          absl::StrJoin(options.image_shape, ",")));
    }
  }
  for (size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    if (c.architecture == "conv" && options.image_shape.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "configuration ", i, " (", ConfigLabel(c),
          ") is convolutional: give --image_shape (8,8,1 for the digits)"));
    }
    if ((c.architecture != "dense" && c.architecture != "conv") ||
        c.units < 1 || c.units > kMaxUnits || !(c.dropout >= 0) ||
        !(c.dropout < 1) || !std::isfinite(c.learning_rate) ||
        !(c.learning_rate > 0) || c.batch_size < 1 ||
        c.batch_size > kMaxBatch) {
      return absl::InvalidArgumentError(absl::StrCat(
          "configuration ", i, " (", ConfigLabel(c), ") is out of range"));
    }
  }
  if (!(options.scale >= 0) || !std::isfinite(options.scale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("scale must be >= 0, got ", options.scale));
  }
  if (!options.logdir.empty()) {
    GG_RETURN_IF_ERROR(
        CheckOutputPath(options.logdir, "--logdir", OutputKind::kDirectory));
  }
  GG_ASSIGN_OR_RETURN(
      std::vector<int> folds,
      StratifiedFolds(data.labels, options.folds, options.seed));
  GridSearch search;
  search.scale_ = options.scale;
  if (search.scale_ == 0) {
    float max_abs = 0;
    for (float v : data.x) max_abs = std::max(max_abs, std::fabs(v));
    search.scale_ = max_abs > 0 ? max_abs : 1;
  }
  search.data_ = std::move(data);
  search.configs_ = std::move(configs);
  search.options_ = std::move(options);
  search.folds_ = std::move(folds);
  return search;
}

int64_t GridSearch::num_trials() const {
  return static_cast<int64_t>(configs_.size()) * options_.folds;
}

std::string GridSearch::TrialName(int index) const {
  const int width = configs_.size() > 100 ? 3 : 2;
  return absl::StrFormat("c%0*d_f%d", width, index / options_.folds,
                         index % options_.folds);
}

Graph& GridSearch::graph() const {
  return options_.graph ? *options_.graph : Graph::Default();
}

absl::StatusOr<std::pair<Tensor, Tensor>> GridSearch::Rows(
    const Config& config, const std::vector<bool>& pick) const {
  const int64_t f = data_.features;
  std::vector<float> x;
  std::vector<int32_t> y;
  const float inv = static_cast<float>(1.0 / scale_);
  for (int64_t r = 0; r < data_.rows; ++r) {
    if (!pick[r]) continue;
    for (int64_t c = 0; c < f; ++c) x.push_back(data_.x[r * f + c] * inv);
    y.push_back(data_.labels[r]);
  }
  const int64_t n = static_cast<int64_t>(y.size());
  std::vector<int64_t> shape = {n, f};
  if (config.architecture == "conv") {
    shape = {n};
    shape.insert(shape.end(), options_.image_shape.begin(),
                 options_.image_shape.end());
  }
  GG_ASSIGN_OR_RETURN(Tensor xt,
                      Tensor::FromData<float>(TensorShape(shape), x));
  GG_ASSIGN_OR_RETURN(Tensor yt, Tensor::FromData<int32_t>({n}, y));
  return std::make_pair(std::move(xt), std::move(yt));
}

absl::StatusOr<Sequential> GridSearch::BuildModel(const Config& config,
                                                  uint64_t seed) const {
  std::vector<Layer> stack;
  if (config.architecture == "conv") {
    stack.push_back(layers::Input(TensorShape(options_.image_shape)));
    stack.push_back(layers::Conv2D(
        config.units, {3, 3},
        {.padding = "same", .activation = "relu", .seed = Mix(seed + 1)}));
    stack.push_back(layers::MaxPooling2D({2, 2}));
    stack.push_back(layers::Flatten());
  } else {
    stack.push_back(layers::Input({data_.features}));
    stack.push_back(layers::Dense(
        config.units, {.activation = "relu", .seed = Mix(seed + 1)}));
  }
  if (config.dropout > 0) {
    stack.push_back(
        layers::Dropout(static_cast<float>(config.dropout), "", Mix(seed + 2)));
  }
  stack.push_back(layers::Dense(
      data_.num_classes, {.activation = "softmax", .seed = Mix(seed + 3)}));
  GG_ASSIGN_OR_RETURN(
      Sequential model,
      Sequential::Create(std::move(stack), {.graph = &graph()}));
  GG_RETURN_IF_ERROR(model.Compile(
      {.optimizer = optimizers::Adam(
           {.learning_rate = static_cast<float>(config.learning_rate)}),
       .loss = losses::SparseCategoricalCrossentropy(),
       .metrics = {"accuracy"}}));
  return model;
}

absl::StatusOr<TrialResult> GridSearch::RunTrial(int index) const {
  if (index < 0 || index >= num_trials()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trial ", index, " out of range [0, ", num_trials(), ")"));
  }
  const std::string name = TrialName(index);
  const std::string where = absl::StrCat("trial ", index, " (", name, ")");
  const auto start = std::chrono::steady_clock::now();
  const double start_wall = NowSeconds();
  TrialResult r;
  r.index = index;
  r.config = index / options_.folds;
  r.fold = index % options_.folds;
  if (index == options_.fail_trial) {
    return absl::InternalError(
        absl::StrCat(where, ": failure injected (--fail_trial)"));
  }
  const Config& config = configs_[r.config];
  std::vector<bool> train(data_.rows), val(data_.rows);
  for (int64_t i = 0; i < data_.rows; ++i) {
    val[i] = folds_[i] == r.fold;
    train[i] = !val[i];
  }
  auto rows_train = Rows(config, train);
  if (!rows_train.ok()) return Prefixed(rows_train.status(), where);
  auto rows_val = Rows(config, val);
  if (!rows_val.ok()) return Prefixed(rows_val.status(), where);
  const std::string dir =
      options_.logdir.empty() ? "" : absl::StrCat(options_.logdir, "/", name);
  const uint64_t seed = Mix(options_.seed * 1000003 + index);

  absl::Status status = [&]() -> absl::Status {
    GG_ASSIGN_OR_RETURN(Sequential model, BuildModel(config, seed));
    auto early =
        callbacks::EarlyStopping::Create({.monitor = "val_loss",
                                          .patience = options_.patience,
                                          .restore_best_weights = true});
    std::vector<std::shared_ptr<Callback>> cbs = {early};
    if (!dir.empty()) {
      cbs.push_back(callbacks::TensorBoard::Create(
          {.log_dir = dir, .write_graph = false}));
    }
    GG_ASSIGN_OR_RETURN(History history,
                        model.Fit(rows_train->first, rows_train->second,
                                  {.epochs = options_.max_epochs,
                                   .batch_size = config.batch_size,
                                   .verbose = 0,
                                   .callbacks = cbs,
                                   .validation_data = *rows_val,
                                   .seed = Mix(seed + 4)}));
    r.live_nodes = graph().num_nodes();
    r.epochs = static_cast<int32_t>(history.epoch.size());
    r.best_epoch = early->best_epoch();
    GG_ASSIGN_OR_RETURN(auto eval,
                        model.Evaluate(rows_val->first, rows_val->second));
    r.val_accuracy = eval["accuracy"];
    r.val_loss = eval["loss"];
    return absl::OkStatus();
  }();
  if (!dir.empty()) {
    const std::map<std::string, hparams::HParamValue> values = {
        {"architecture", config.architecture},
        {"units", static_cast<double>(config.units)},
        {"dropout", config.dropout},
        {"learning_rate", config.learning_rate},
        {"batch_size", static_cast<double>(config.batch_size)}};
    std::vector<proto::Summary> summaries = {hparams::SessionStartSummary(
        values, absl::StrFormat("c%02d", r.config), start_wall)};
    if (status.ok()) {
      proto::Summary accuracy;
      proto::Summary::Value* v = accuracy.add_value();
      v->set_tag("fold_accuracy");
      v->set_simple_value(r.val_accuracy);
      summaries.push_back(accuracy);
    }
    const double end_wall = NowSeconds();
    summaries.push_back(hparams::SessionEndSummary(
        status.ok() ? hparams::STATUS_SUCCESS : hparams::STATUS_FAILURE,
        end_wall));
    absl::Status written = hparams::WriteSummaries(dir, summaries, end_wall);
    if (status.ok()) status = written;
  }
  if (!status.ok()) return Prefixed(status, where);
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  r.rss_kb = consecutive::ProcessRssKb();
  return r;
}

absl::Status GridSearch::TrainAndSave(const Config& config, int epochs,
                                      const std::string& dir) const {
  GG_RETURN_IF_ERROR(
      CheckOutputPath(dir, "--save_best", OutputKind::kDirectory));
  std::vector<bool> all(data_.rows, true);
  GG_ASSIGN_OR_RETURN(auto rows, Rows(config, all));
  const uint64_t seed = Mix(options_.seed * 1000003 + num_trials());
  GG_ASSIGN_OR_RETURN(Sequential model, BuildModel(config, seed));
  GG_RETURN_IF_ERROR(model
                         .Fit(rows.first, rows.second,
                              {.epochs = std::max(1, epochs),
                               .batch_size = config.batch_size,
                               .verbose = 0,
                               .seed = Mix(seed + 4)})
                         .status());
  return model.Save(dir);
}

absl::Status GridSearch::WriteExperiment() const {
  if (options_.logdir.empty()) return absl::OkStatus();
  std::set<std::string> archs;
  std::set<double> units, dropouts, rates, batches;
  for (const Config& c : configs_) {
    archs.insert(c.architecture);
    units.insert(static_cast<double>(c.units));
    dropouts.insert(c.dropout);
    rates.insert(c.learning_rate);
    batches.insert(c.batch_size);
  }
  auto numbers = [](const std::set<double>& s) {
    return std::vector<hparams::HParamValue>(s.begin(), s.end());
  };
  std::vector<hparams::HParamValue> arch_values(archs.begin(), archs.end());
  GG_ASSIGN_OR_RETURN(
      proto::Summary experiment,
      hparams::ExperimentSummary(
          {{"architecture", arch_values, "dense or conv"},
           {"units", numbers(units), "hidden units (dense) or filters (conv)"},
           {"dropout", numbers(dropouts), "dropout rate"},
           {"learning_rate", numbers(rates), "Adam's learning rate"},
           {"batch_size", numbers(batches), "batch size"}},
          {{"", "fold_accuracy", "fold accuracy", hparams::DATASET_VALIDATION},
           {"validation", "epoch_accuracy", "val accuracy (last epoch)",
            hparams::DATASET_VALIDATION},
           {"validation", "epoch_loss", "val loss (last epoch)",
            hparams::DATASET_VALIDATION},
           {"train", "epoch_accuracy", "train accuracy",
            hparams::DATASET_TRAINING},
           {"train", "epoch_loss", "train loss", hparams::DATASET_TRAINING}},
          NowSeconds(), "grid_search"));
  return hparams::WriteSummaries(options_.logdir, {experiment}, NowSeconds());
}

std::vector<ConfigSummary> SummarizeConfigs(
    int num_configs, const std::vector<TrialResult>& results) {
  std::vector<ConfigSummary> out(std::max(0, num_configs));
  std::vector<std::vector<double>> acc(out.size());
  for (size_t i = 0; i < out.size(); ++i) out[i].config = static_cast<int>(i);
  for (const TrialResult& r : results) {
    if (r.config < 0 || r.config >= num_configs) continue;
    ConfigSummary& s = out[r.config];
    ++s.folds;
    acc[r.config].push_back(r.val_accuracy);
    s.mean_epochs += r.epochs;
    s.mean_best_epochs += r.best_epoch + 1;
    s.seconds += r.seconds;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    ConfigSummary& s = out[i];
    if (s.folds == 0) continue;
    double sum = 0;
    for (double a : acc[i]) sum += a;
    s.mean_accuracy = sum / s.folds;
    double sq = 0;
    for (double a : acc[i]) sq += (a - s.mean_accuracy) * (a - s.mean_accuracy);
    s.std_accuracy = std::sqrt(sq / s.folds);
    s.mean_epochs /= s.folds;
    s.mean_best_epochs /= s.folds;
  }
  return out;
}

int BestConfig(const std::vector<ConfigSummary>& summaries) {
  int best = -1;
  for (size_t i = 0; i < summaries.size(); ++i) {
    if (summaries[i].folds == 0) continue;
    if (best < 0 ||
        summaries[i].mean_accuracy > summaries[best].mean_accuracy) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

ProcessStats StatsOf(int rank, const std::vector<TrialResult>& results,
                     const Graph& graph, double seconds) {
  ProcessStats s;
  s.rank = rank;
  s.trials = static_cast<int32_t>(results.size());
  s.seconds = seconds;
  s.gc = graph.gc_stats();
  if (results.empty()) return s;
  s.live_nodes_first = results.front().live_nodes;
  s.live_nodes_last = results.back().live_nodes;
  s.rss_first_kb = results.front().rss_kb;
  s.rss_last_kb = results.back().rss_kb;
  for (const TrialResult& r : results) {
    s.live_nodes_max = std::max(s.live_nodes_max, r.live_nodes);
  }
  return s;
}

std::string FormatProgress(const GridSearch& search, const TrialResult& r,
                           int done, int total, double elapsed_seconds) {
  const double eta =
      done > 0 ? elapsed_seconds / done * std::max(0, total - done) : 0;
  return absl::StrFormat(
      "trial %d/%d %s %s: val_acc %.6f val_loss %.6f, %d epochs, %.1f s, %d "
      "live nodes, ETA %s",
      done, total, search.TrialName(r.index),
      ConfigLabel(search.configs()[r.config]), r.val_accuracy, r.val_loss,
      r.epochs, r.seconds, r.live_nodes, Duration(eta));
}

std::string FormatTrials(const GridSearch& search,
                         std::vector<TrialResult> results) {
  std::sort(results.begin(), results.end(),
            [](const TrialResult& a, const TrialResult& b) {
              return a.index < b.index;
            });
  std::string out = "Trials (name, val_accuracy, val_loss, epochs):\n";
  for (const TrialResult& r : results) {
    absl::StrAppendFormat(&out, "  %s %.6f %.6f %d\n",
                          search.TrialName(r.index), r.val_accuracy, r.val_loss,
                          r.epochs);
  }
  return out;
}

std::string FormatTable(const GridSearch& search,
                        const std::vector<ConfigSummary>& summaries) {
  const int best = BestConfig(summaries);
  std::string out = absl::StrFormat(
      "%-6s %-5s %6s %7s %8s %5s  %-17s %7s %8s\n", "config", "arch", "units",
      "dropout", "lr", "batch",
      absl::StrCat("val_acc (", search.options().folds, " folds)"), "epochs",
      "time s");
  for (const ConfigSummary& s : summaries) {
    const Config& c = search.configs()[s.config];
    absl::StrAppendFormat(
        &out,
        "c%02d    %-5s %6d %7s %8s %5d  %.4f \u00b1 %.4f   %7.1f %8.1f%s\n",
        s.config, c.architecture, c.units, Number(c.dropout),
        Number(c.learning_rate), c.batch_size, s.mean_accuracy, s.std_accuracy,
        s.mean_epochs, s.seconds, s.config == best ? "  <- best" : "");
  }
  return out;
}

std::string FormatBest(const GridSearch& search,
                       const std::vector<ConfigSummary>& summaries) {
  const int best = BestConfig(summaries);
  if (best < 0) return "Best configuration: none (no results)\n";
  const ConfigSummary& s = summaries[best];
  return absl::StrFormat(
      "Best configuration: c%02d %s\n  %d-fold validation accuracy %.4f "
      "\u00b1 %.4f (mean \u00b1 std over folds), %.1f epochs on average\n",
      best, ConfigLabel(search.configs()[best]), s.folds, s.mean_accuracy,
      s.std_accuracy, s.mean_epochs);
}

std::string FormatProcessStats(const ProcessStats& s) {
  std::string out = absl::StrFormat("Rank %d: %d trials in %.1f s\n", s.rank,
                                    s.trials, s.seconds);
  absl::StrAppendFormat(
      &out, "  live graph nodes   first %d, max %d, last %d (after each fit)\n",
      s.live_nodes_first, s.live_nodes_max, s.live_nodes_last);
  absl::StrAppendFormat(
      &out, "  process RSS        last/first %.4f (%d kB / %d kB)\n",
      consecutive::Ratio(s.rss_last_kb, s.rss_first_kb), s.rss_last_kb,
      s.rss_first_kb);
  absl::StrAppend(&out, "  ", consecutive::FormatCollector(s.gc));
  return out;
}

}  // namespace graphgc::grid
