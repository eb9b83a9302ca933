#include "models/saving.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <variant>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "models/layer_config.h"
#include "models/layer_registry.h"
#include "models/layer_state.h"
#include "models/saving_access.h"
#include "nlohmann/json.hpp"
#include "serialize/frozen_graph.h"
#include "serialize/graph_def.h"
#include "serialize/keras_weights.h"
#include "serialize/keras_weights_layout.h"
#include "util/file.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {

using models_internal::BuiltLayer;
using models_internal::LayerState;
using models_internal::ModelSnapshot;
using models_internal::SavingAccess;
using Json = nlohmann::json;

namespace {

constexpr char kConfigFile[] = "config.json";
constexpr char kWeightsFile[] = "model.weights.h5";
constexpr char kGraphFile[] = "model.pb";
constexpr char kSignatureFile[] = "signature.json";
// config.json and signature.json are small: a model of thousands of layers
// is well under a megabyte, some 35 values a layer, nested 6 deep. The value
// count bounds what parsing builds (each value a node of at most about 100
// bytes) whatever the text holds; the depth bounds recursion over the tree.
constexpr int64_t kMaxJsonBytes = int64_t{16} << 20;
constexpr int64_t kMaxJsonValues = int64_t{1} << 18;
constexpr int kMaxJsonDepth = 64;
// HDF5 metadata in model.weights.h5 beyond the weights' own bytes: the
// superblock and heaps, plus object headers per layer (groups, datasets,
// Keras's attributes).
constexpr int64_t kWeightsFileMargin = int64_t{1} << 20;
constexpr int64_t kWeightsFileMarginPerLayer = int64_t{64} << 10;

// `fn()`, or ResourceExhausted naming `what` when it runs out of memory:
// std::bad_alloc goes no further than this header's functions.
template <typename Fn>
auto OutOfMemoryIsAStatus(const std::string& what, Fn fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  }
}

using models_internal::BatchShape;
using models_internal::FindLayerKind;
using models_internal::FloatJson;
using models_internal::KerasObject;
using models_internal::KnownKinds;
using models_internal::LayerKind;
using models_internal::Shown;
using Object = models_internal::ConfigObject;

// The weights group of each layer ("layers/dense", "layers/dense_1"), empty
// for a layer without one: Keras's names, uniqued per model in layer order.
std::vector<std::string> WeightsPaths(const std::vector<Layer>& layers) {
  std::map<std::string, int> used;
  std::vector<std::string> paths;
  for (const Layer& layer : layers) {
    const LayerKind* kind = FindLayerKind(layer.kind());
    if (kind == nullptr || kind->weights_group.empty()) {
      paths.emplace_back();
      continue;
    }
    const int n = used[kind->weights_group]++;
    paths.push_back(n == 0
                        ? absl::StrCat("layers/", kind->weights_group)
                        : absl::StrCat("layers/", kind->weights_group, "_", n));
  }
  return paths;
}

// ---------------------------------------------------------------------------
// Compile settings: Keras's "compile_config".

Json OptimizerJson(const Optimizer& optimizer) {
  if (const auto* sgd = std::get_if<SGDOptions>(&optimizer.options)) {
    const SGDOptions& o = *sgd;
    return KerasObject("keras.optimizers", "SGD",
                       {{"name", "SGD"},
                        {"learning_rate", FloatJson(o.learning_rate)},
                        {"momentum", FloatJson(o.momentum)},
                        {"nesterov", o.nesterov}});
  }
  // Adam; no optimizer (never compiled) is written as Adam's defaults.
  const auto* adam = std::get_if<AdamOptions>(&optimizer.options);
  const AdamOptions o = adam != nullptr ? *adam : AdamOptions{};
  return KerasObject("keras.optimizers", "Adam",
                     {{"name", "adam"},
                      {"learning_rate", FloatJson(o.learning_rate)},
                      {"beta_1", FloatJson(o.beta_1)},
                      {"beta_2", FloatJson(o.beta_2)},
                      {"epsilon", FloatJson(o.epsilon)},
                      {"amsgrad", false}});
}

Json LossJson(const Loss& loss) {
  const char* class_name = "MeanSquaredError";
  Json config = {{"name", loss.name()}, {"reduction", "sum_over_batch_size"}};
  if (loss.kind == Loss::Kind::kSparseCategoricalCrossentropy) {
    class_name = "SparseCategoricalCrossentropy";
  } else if (loss.kind == Loss::Kind::kCategoricalCrossentropy) {
    class_name = "CategoricalCrossentropy";
  }
  if (loss.kind != Loss::Kind::kMeanSquaredError) {
    config["from_logits"] = loss.from_logits;
  }
  return KerasObject("keras.losses", class_name, std::move(config));
}

Json CompileJson(const CompileOptions& compile) {
  Json metrics = nullptr;
  if (!compile.metrics.empty()) metrics = compile.metrics;
  return {{"optimizer", OptimizerJson(compile.optimizer)},
          {"loss", LossJson(compile.loss)},
          {"loss_weights", nullptr},
          {"metrics", std::move(metrics)},
          {"weighted_metrics", nullptr},
          {"run_eagerly", false},
          {"steps_per_execution", 1},
          {"jit_compile", false}};
}

// "adam" / {"class_name": "Adam", "config": {...}}.
absl::StatusOr<Optimizer> ReadOptimizer(const Object& compile) {
  const Json* j = compile.Find("optimizer");
  if (j == nullptr) return compile.Missing("optimizer");
  std::string class_name;
  if (j->is_string()) {
    class_name = j->get<std::string>();
  } else if (j->is_object()) {
    GG_ASSIGN_OR_RETURN(
        class_name,
        Object(*j, compile.where() + " optimizer").String("class_name"));
  } else {
    return compile.WrongType("optimizer", "a string or an object", *j);
  }
  const Json empty = Json::object();
  const Json* config = &empty;
  if (j->is_object()) {
    auto it = j->find("config");
    if (it != j->end()) {
      if (!it->is_object()) {
        return Object(*j, compile.where() + " optimizer")
            .WrongType("config", "an object", *it);
      }
      config = &*it;
    }
  }
  const Object c(*config, compile.where() + " optimizer config");
  if (class_name == "Adam" || class_name == "adam") {
    AdamOptions o;
    GG_ASSIGN_OR_RETURN(o.learning_rate,
                        c.Float("learning_rate", o.learning_rate));
    GG_ASSIGN_OR_RETURN(o.beta_1, c.Float("beta_1", o.beta_1));
    GG_ASSIGN_OR_RETURN(o.beta_2, c.Float("beta_2", o.beta_2));
    GG_ASSIGN_OR_RETURN(o.epsilon, c.Float("epsilon", o.epsilon));
    return optimizers::Adam(o);
  }
  if (class_name == "SGD" || class_name == "sgd") {
    SGDOptions o;
    GG_ASSIGN_OR_RETURN(o.learning_rate,
                        c.Float("learning_rate", o.learning_rate));
    GG_ASSIGN_OR_RETURN(o.momentum, c.Float("momentum", o.momentum));
    GG_ASSIGN_OR_RETURN(o.nesterov, c.Bool("nesterov", o.nesterov));
    return optimizers::SGD(o);
  }
  return compile.Error(absl::StrCat("unknown optimizer '", class_name,
                                    "' (supported: Adam, SGD)"));
}

// "mse" / {"class_name": "MeanSquaredError", "config": {...}}.
absl::StatusOr<Loss> ReadLoss(const Object& compile) {
  const Json* j = compile.Find("loss");
  if (j == nullptr) return compile.Missing("loss");
  std::string name;
  bool from_logits = false;
  if (j->is_string()) {
    name = j->get<std::string>();
  } else if (j->is_object()) {
    const Object loss(*j, compile.where() + " loss");
    GG_ASSIGN_OR_RETURN(name, loss.String("class_name"));
    if (loss.Find("config") != nullptr) {
      GG_ASSIGN_OR_RETURN(Object config,
                          loss.Child("config", loss.where() + " config"));
      GG_ASSIGN_OR_RETURN(from_logits, config.Bool("from_logits", false));
    }
  } else {
    return compile.WrongType("loss", "a string or an object", *j);
  }
  const CrossentropyOptions ce{.from_logits = from_logits};
  if (name == "SparseCategoricalCrossentropy" ||
      name == "sparse_categorical_crossentropy") {
    return losses::SparseCategoricalCrossentropy(ce);
  }
  if (name == "CategoricalCrossentropy" || name == "categorical_crossentropy") {
    return losses::CategoricalCrossentropy(ce);
  }
  if (name == "MeanSquaredError" || name == "mean_squared_error" ||
      name == "mse") {
    return losses::MeanSquaredError();
  }
  return compile.Error(absl::StrCat(
      "unknown loss '", name,
      "' (supported: SparseCategoricalCrossentropy, CategoricalCrossentropy, "
      "MeanSquaredError)"));
}

absl::StatusOr<CompileOptions> ReadCompile(const Object& compile) {
  CompileOptions out;
  GG_ASSIGN_OR_RETURN(out.optimizer, ReadOptimizer(compile));
  GG_ASSIGN_OR_RETURN(out.loss, ReadLoss(compile));
  const Json* metrics = compile.Find("metrics");
  if (metrics != nullptr && !metrics->is_null()) {
    if (!metrics->is_array()) {
      return compile.WrongType("metrics", "a list of strings or null",
                               *metrics);
    }
    for (const Json& m : *metrics) {
      if (!m.is_string()) {
        return compile.Error(absl::StrCat(
            "field 'metrics' must be a list of strings; it holds ", Shown(m)));
      }
      out.metrics.push_back(m.get<std::string>());
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// config.json

struct ParsedConfig {
  std::string name;
  std::vector<Layer> layers;
  std::optional<CompileOptions> compile;
};

// A first pass over the text that builds nothing: counts values and depth
// and stops at the first one over the limits, or at a syntax error.
class JsonLimits final : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override {
    return Value();
  }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override { return Open(); }
  bool key(string_t&) override { return Value(); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& e) override {
    syntax_error_ = e.what();
    return false;
  }

  // Why the pass stopped, or "" when the text is within the limits.
  const std::string& syntax_error() const { return syntax_error_; }
  std::string over_limit() const {
    if (depth_ > kMaxJsonDepth) {
      return absl::StrCat("nested more than ", kMaxJsonDepth, " deep");
    }
    if (values_ > kMaxJsonValues) {
      return absl::StrCat("more than ", kMaxJsonValues, " values");
    }
    return "";
  }

 private:
  bool Value() { return ++values_ <= kMaxJsonValues; }
  bool Open() { return Value() && ++depth_ <= kMaxJsonDepth; }
  bool Close() {
    --depth_;
    return true;
  }

  int64_t values_ = 0;
  int depth_ = 0;
  std::string syntax_error_;
};

absl::StatusOr<Json> ParseJson(std::string_view text, const std::string& file) {
  if (static_cast<int64_t>(text.size()) > kMaxJsonBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(file, ": ", text.size(), " bytes, more than the ",
                     kMaxJsonBytes, " allowed"));
  }
  JsonLimits limits;
  // nlohmann reports errors by exception too; they are caught here and go
  // no further.
  try {
    if (!Json::sax_parse(text.begin(), text.end(), &limits)) {
      if (!limits.syntax_error().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": not valid JSON: ", limits.syntax_error()));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": ", limits.over_limit(),
          " (config.json and signature.json "
          "hold at most ",
          kMaxJsonValues, " values nested at most ", kMaxJsonDepth, " deep)"));
    }
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": not valid JSON: ", e.what()));
  }
}

absl::StatusOr<ParsedConfig> ParseConfig(std::string_view text,
                                         const std::string& file) {
  GG_ASSIGN_OR_RETURN(const Json root, ParseJson(text, file));
  if (!root.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": the top level must be an object, got ", Shown(root)));
  }
  const Object top(root, file);
  GG_ASSIGN_OR_RETURN(const std::string class_name, top.String("class_name"));
  if (class_name != "Sequential") {
    return top.Error(absl::StrCat("class_name is '", class_name,
                                  "'; only Sequential models load"));
  }
  GG_ASSIGN_OR_RETURN(const Object config,
                      top.Child("config", file + " config"));
  ParsedConfig out;
  GG_ASSIGN_OR_RETURN(out.name, config.String("name", ""));
  const Json* layers = config.Find("layers");
  if (layers == nullptr) return config.Missing("layers");
  if (!layers->is_array()) {
    return config.WrongType("layers", "a list of layers", *layers);
  }
  for (size_t i = 0; i < layers->size(); ++i) {
    const Json& entry = (*layers)[i];
    const std::string where = absl::StrCat(file, ": layers[", i, "]");
    if (!entry.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " must be an object, got ", Shown(entry)));
    }
    const Object layer(entry, where);
    GG_ASSIGN_OR_RETURN(const std::string kind_name,
                        layer.String("class_name"));
    const LayerKind* kind = FindLayerKind(kind_name);
    if (kind == nullptr) {
      return layer.Error(absl::StrCat("unknown layer class '", kind_name,
                                      "' (known: ", KnownKinds(), ")"));
    }
    GG_ASSIGN_OR_RETURN(
        const Object layer_config,
        layer.Child("config",
                    absl::StrCat(where, " (", kind_name, ") config")));
    GG_ASSIGN_OR_RETURN(Layer made, kind->read_config(layer_config));
    out.layers.push_back(std::move(made));
  }
  const Json* compile = top.Find("compile_config");
  if (compile != nullptr && !compile->is_null()) {
    if (!compile->is_object()) {
      return top.WrongType("compile_config", "an object or null", *compile);
    }
    GG_ASSIGN_OR_RETURN(
        out.compile, ReadCompile(Object(*compile, file + " compile_config")));
  }
  return out;
}

// ---------------------------------------------------------------------------
// The memory budget of a load, from config.json alone

// What loading a config's model takes (see models/saving.h).
struct LoadBudget {
  int64_t weights_bytes = 0;
  int64_t load_bytes = 0;
  int64_t max_file_bytes = 0;
};

// Optimizer slots per weight a Keras weights file may hold beside the
// weights for the config's optimizer: Adam's m and v, SGD's momentum.
int OptimizerSlots(const std::optional<CompileOptions>& compile) {
  if (!compile.has_value()) return 0;
  if (std::holds_alternative<AdamOptions>(compile->optimizer.options)) {
    return 2;
  }
  return std::holds_alternative<SGDOptions>(compile->optimizer.options) ? 1 : 0;
}

std::string Decimal(absl::int128 v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// Counts the float32 weights `layers` declare, layer by layer while their
// shapes are valid (Sequential::Create refuses the first that is not,
// before building anything), and refuses a load over `max_bytes` (<= 0: no
// budget). Every product is overflow-checked; sums are 128-bit.
absl::StatusOr<LoadBudget> CheckLoadBudget(const std::vector<Layer>& layers,
                                           int optimizer_slots,
                                           const std::string& file,
                                           int64_t max_bytes) {
  absl::int128 elements = 0;
  TensorShape in;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerState* state = SavingAccess::State(layers[i]);
    if (state == nullptr || !state->error.ok() ||
        (i == 0) != models_internal::IsInputLayer(*state)) {
      break;
    }
    absl::StatusOr<TensorShape> out = models_internal::OutputShape(*state, in);
    if (!out.ok()) break;
    bool known = true;
    for (const std::vector<int64_t>& shape :
         models_internal::VariableShapes(*state, in)) {
      int64_t n = 1;
      for (int64_t d : shape) {
        if (d < 0) {
          known = false;
          break;
        }
        if (__builtin_mul_overflow(n, d, &n)) {
          return absl::ResourceExhaustedError(absl::StrCat(
              file, ": layers[", i, "] (", layers[i].kind(),
              ") declares more weights than can be counted, more than the "
              "load budget of ",
              max_bytes, " bytes (LoadOptions::max_bytes)"));
        }
      }
      if (!known) break;
      elements += n;
    }
    if (!known) break;
    in = *std::move(out);
  }
  const absl::int128 weights = elements * int{sizeof(float)};
  // The model's variables and the values read, model.weights.h5's bytes
  // and HDF5's copy of them: the file holds the weights at least once.
  const absl::int128 load = 4 * weights;
  const absl::int128 limit =
      max_bytes > 0 ? absl::int128(max_bytes)
                    : absl::int128(std::numeric_limits<int64_t>::max());
  if (load > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        file, ": its layers declare ", Decimal(weights),
        " bytes of float32 weights; loading them takes at least ",
        Decimal(load),
        " bytes (the weights twice, model.weights.h5 twice), more than the "
        "load budget of ",
        max_bytes > 0 ? absl::StrCat(max_bytes, " bytes")
                      : std::string("2^63 bytes"),
        " (LoadOptions::max_bytes)"));
  }
  absl::int128 file_bytes = weights * (1 + optimizer_slots) +
                            kWeightsFileMargin +
                            absl::int128(kWeightsFileMarginPerLayer) *
                                static_cast<int64_t>(layers.size());
  // What the budget leaves once the weights are held twice, for the file's
  // two copies.
  file_bytes = std::min(file_bytes, (limit - 2 * weights) / 2);
  return LoadBudget{.weights_bytes = static_cast<int64_t>(weights),
                    .load_bytes = static_cast<int64_t>(load),
                    .max_file_bytes = static_cast<int64_t>(file_bytes)};
}

// Refuses a weights file holding a layer group no layer of `layers` has,
// as Keras refuses a layer count mismatch. Groups outside "layers"
// (Keras's "optimizer") are not looked at.
absl::Status CheckSavedLayers(std::string_view h5,
                              const std::vector<Layer>& layers,
                              const std::string& file) {
  std::set<std::string> expected;
  for (const std::string& path : WeightsPaths(layers)) {
    if (!path.empty()) expected.insert(path.substr(sizeof("layers/") - 1));
  }
  absl::StatusOr<KerasWeightsLayers> saved = ListKerasWeightsLayers(
      absl::string_view(h5.data(), h5.size()), expected.size() + 1, file);
  GG_RETURN_IF_ERROR(saved.status());
  std::string unknown;
  for (const std::string& name : saved->names) {
    if (expected.count(name) == 0) {
      unknown = name;
      break;
    }
  }
  if (unknown.empty() && saved->count <= expected.size()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      file,
      ": Layer count mismatch when loading weights from file. Model "
      "expected ",
      expected.size(), " layers, found ", saved->count, " saved layers",
      unknown.empty() ? std::string()
                      : absl::StrCat(" ('layers/", unknown,
                                     "' is no layer of config.json)")));
}

// Names as `renaming` has them (none renamed when empty).
Json ConfigJson(const ModelSnapshot& snap, const ScopeRenaming& renaming = {}) {
  Json layers = Json::array();
  for (const models_internal::SavedLayer& saved : snap.layers) {
    // Every kind a model can hold is in the table (LoadModel reads none
    // other); Save checks before calling.
    const LayerKind* kind = FindLayerKind(saved.layer.kind());
    Json entry = KerasObject(
        "keras.layers", kind->class_name.c_str(),
        kind->write_config(*saved.state,
                           RenameScopes(saved.layer.name(), renaming)));
    layers.push_back(std::move(entry));
  }
  const TensorShape input_shape =
      snap.layers.empty() ? TensorShape() : snap.layers[0].state->input_shape;
  Json config = {{"name", RenameScopes(snap.name, renaming)},
                 {"trainable", true},
                 {"dtype", "float32"},
                 {"layers", std::move(layers)},
                 {"build_input_shape", BatchShape(input_shape)}};
  Json root = KerasObject("keras", "Sequential", std::move(config));
  root["build_config"] = {{"input_shape", BatchShape(input_shape)}};
  root["compile_config"] =
      snap.compiled ? CompileJson(snap.compile) : Json(nullptr);
  return root;
}

// ---------------------------------------------------------------------------
// signature.json

Json SignatureTensorJson(const std::string& name, const TensorShape& shape) {
  Json dims = Json::array();
  for (int64_t d : shape.dim_sizes()) {
    dims.push_back(d < 0 ? Json(nullptr) : Json(d));
  }
  return {{"name", name}, {"dtype", "float32"}, {"shape", std::move(dims)}};
}

absl::StatusOr<SignatureTensor> ReadSignatureTensor(const Object& parent,
                                                    const char* key) {
  GG_ASSIGN_OR_RETURN(
      const Object t,
      parent.Child(key, absl::StrCat(parent.where(), ".", key)));
  GG_ASSIGN_OR_RETURN(std::string name, t.String("name"));
  GG_ASSIGN_OR_RETURN(const std::string dtype, t.String("dtype"));
  if (dtype != "float32") {
    return t.Error(absl::StrCat("dtype '", dtype, "' (only float32)"));
  }
  const Json* shape = t.Find("shape");
  if (shape == nullptr) return t.Missing("shape");
  if (!shape->is_array()) {
    return t.WrongType("shape", "a list of integers or nulls", *shape);
  }
  std::vector<int64_t> dims;
  for (const Json& d : *shape) {
    if (d.is_null()) {
      dims.push_back(-1);
    } else if (d.is_number_integer() && !d.is_number_unsigned() &&
               d.get<int64_t>() >= 0) {
      dims.push_back(d.get<int64_t>());
    } else if (d.is_number_unsigned() &&
               d.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
      dims.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    } else {
      return t.Error(absl::StrCat(
          "field 'shape' must be a list of integers or nulls; it holds ",
          Shown(d)));
    }
  }
  if (absl::Status valid = TensorShape::Validate(dims, /*allow_unknown=*/true);
      !valid.ok()) {
    return t.Error(absl::StrCat("field 'shape': ", valid.message()));
  }
  return SignatureTensor{
      .name = std::move(name), .dtype = DT_FLOAT, .shape = TensorShape(dims)};
}

// ---------------------------------------------------------------------------
// Files

std::string Join(const std::string& dir, const char* file) {
  return absl::StrCat(dir, "/", file);
}

absl::Status Errno(const std::string& what) { return OsError(errno, what); }

// Writes `bytes` to the new file `path` and syncs it.
absl::Status WriteNewFile(const std::string& path, const std::string& bytes) {
  int raw;
  do {
    raw = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) return Errno(absl::StrCat("create ", path));
  ScopedFd fd(raw);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(absl::StrCat("write ", path));
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return Errno(absl::StrCat("fsync ", path));
  if (::close(fd.release()) != 0) return Errno(absl::StrCat("close ", path));
  return absl::OkStatus();
}

// Syncs a directory's entries (a rename in it), best effort.
void SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

bool IsSaveFile(const std::string& name) {
  return name == kConfigFile || name == kWeightsFile || name == kGraphFile ||
         name == kSignatureFile;
}

// Replaces `dir` by `staged` (a complete model directory beside it): a
// rename when `dir` does not exist, else an atomic exchange (Linux's
// renameat2 RENAME_EXCHANGE; where the file system lacks it, two renames,
// between which `dir` briefly does not exist, never half-written). What
// `dir` held is deleted afterwards.
absl::Status Replace(const std::string& staged, const std::string& dir) {
  if (::rename(staged.c_str(), dir.c_str()) == 0) return absl::OkStatus();
  if (errno != EEXIST && errno != ENOTEMPTY) {
    return Errno(absl::StrCat("rename ", staged, " to ", dir));
  }
  // `dir` exists: it must be a model directory (nothing else is deleted).
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!IsSaveFile(entry.path().filename().string()) ||
        !entry.is_regular_file(ec)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Sequential::Save: ", dir, " holds '",
          entry.path().filename().string(),
          "', which Save did not write; Save replaces the directory whole "
          "and deletes nothing else: choose another directory"));
    }
  }
  if (ec) return FileError(ec, absl::StrCat("list ", dir));
  if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, dir.c_str(),
                  RENAME_EXCHANGE) == 0) {
    std::filesystem::remove_all(staged, ec);  // the old model now
    return absl::OkStatus();
  }
  if (errno != EINVAL && errno != ENOSYS) {
    return Errno(absl::StrCat("exchange ", staged, " and ", dir));
  }
  const std::string old = staged + ".old";
  if (::rename(dir.c_str(), old.c_str()) != 0) {
    return Errno(absl::StrCat("rename ", dir, " to ", old));
  }
  if (::rename(staged.c_str(), dir.c_str()) != 0) {
    absl::Status s = Errno(absl::StrCat("rename ", staged, " to ", dir));
    ::rename(old.c_str(), dir.c_str());
    return s;
  }
  std::filesystem::remove_all(old, ec);
  return absl::OkStatus();
}

// The frozen inference graph and its signature.
struct FrozenModel {
  std::string graph_bytes;
  std::string signature;
};

absl::StatusOr<FrozenModel> Freeze(const ModelSnapshot& snap) {
  GG_ASSIGN_OR_RETURN(proto::GraphDef def, ExportGraphDef({snap.output}));
  int input_index = -1, output_index = -1;
  for (int i = 0; i < def.node_size(); ++i) {
    if (def.node(i).name() == snap.input.node_name()) input_index = i;
    if (def.node(i).name() == snap.output.node_name()) output_index = i;
  }
  if (input_index < 0 || output_index < 0) {
    return absl::InternalError(
        "Sequential::Save: the exported graph lacks the model's input or "
        "output");
  }
  GG_ASSIGN_OR_RETURN(proto::GraphDef frozen,
                      FreezeGraphDef(def, snap.variables));
  // Names as in a fresh graph ("dense", not "dense_14"); order is kept.
  LocalizeScopeNames(frozen);
  std::vector<int64_t> output_dims = {-1};
  const auto& shapes = def.node(output_index).attr();
  auto it = shapes.find("_output_shapes");
  if (it != shapes.end() &&
      it->second.list().shape_size() > snap.output.index()) {
    output_dims.clear();
    for (const auto& d : it->second.list().shape(snap.output.index()).dim()) {
      output_dims.push_back(d.size());
    }
  }
  std::vector<int64_t> input_dims = {-1};
  for (int64_t d : snap.layers[0].state->input_shape.dim_sizes()) {
    input_dims.push_back(d);
  }
  const Json signature = {
      {"inputs",
       {{"x", SignatureTensorJson(
                  absl::StrCat(frozen.node(input_index).name(), ":0"),
                  TensorShape(input_dims))}}},
      {"outputs",
       {{"predictions",
         SignatureTensorJson(absl::StrCat(frozen.node(output_index).name(), ":",
                                          snap.output.index()),
                             TensorShape(output_dims))}}}};
  return FrozenModel{
      .graph_bytes = DeterministicBytes(frozen),
      .signature =
          signature.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"};
}

}  // namespace

namespace {

// Suffix counter of staged files and directories (unique within a process).
std::atomic<int64_t> next_staged{0};

// The bytes of model.weights.h5 for `snap`, or a status prefixed by `where`:
// Unimplemented for a layer kind without saving support.
absl::StatusOr<std::string> WeightsBytes(const ModelSnapshot& snap,
                                         const std::string& where) {
  for (const models_internal::SavedLayer& saved : snap.layers) {
    if (FindLayerKind(saved.layer.kind()) == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          where, ": layer '", saved.layer.name(), "' (", saved.layer.kind(),
          ") has no saving support (models/layer_registry.h)"));
    }
  }
  std::vector<LayerWeights> weights;
  std::vector<Layer> layers;
  for (const auto& saved : snap.layers) layers.push_back(saved.layer);
  const std::vector<std::string> paths = WeightsPaths(layers);
  for (size_t i = 0; i < snap.layers.size(); ++i) {
    if (!paths[i].empty()) weights.push_back({paths[i], snap.layers[i].values});
  }
  absl::StatusOr<std::string> h5 = EncodeKerasWeights(weights);
  if (!h5.ok()) {
    return Annotate(h5.status(), where);
  }
  return h5;
}

}  // namespace

absl::StatusOr<std::string> ModelToJson(const Sequential& model) {
  return ModelToJson(model, ScopeRenaming());
}

absl::StatusOr<std::string> ModelToJson(const Sequential& model,
                                        const ScopeRenaming& renaming) {
  return OutOfMemoryIsAStatus(
      "ModelToJson", [&]() -> absl::StatusOr<std::string> {
        GG_ASSIGN_OR_RETURN(const ModelSnapshot snap,
                            SavingAccess::Snapshot(model));
        return ConfigJson(snap, renaming)
            .dump(-1, ' ', false, Json::error_handler_t::replace);
      });
}

namespace {

absl::Status SaveUnguarded(const Sequential& model, const std::string& dir) {
  GG_RETURN_IF_ERROR(CheckPath(dir, "Sequential::Save directory"));
  GG_ASSIGN_OR_RETURN(const ModelSnapshot snap, SavingAccess::Snapshot(model));
  const std::string where =
      absl::StrCat("Sequential::Save of '", snap.name, "' to ", dir);
  // Everything is made in memory first: a failure writes nothing.
  GG_ASSIGN_OR_RETURN(const std::string h5, WeightsBytes(snap, where));
  const std::string config =
      ConfigJson(snap).dump(2, ' ', false, Json::error_handler_t::replace) +
      "\n";
  absl::StatusOr<FrozenModel> frozen = Freeze(snap);
  if (!frozen.ok()) {
    return Annotate(frozen.status(), where);
  }

  // Staged in a sibling directory, then swapped in.
  std::string target = dir;
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  if (target == "/") {
    return absl::InvalidArgumentError(
        "Sequential::Save directory: '/' cannot be replaced");
  }
  const std::filesystem::path parent =
      std::filesystem::path(target).parent_path();
  std::error_code ec;
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) return FileError(ec, absl::StrCat("create ", parent.string()));
  }
  const std::string staged =
      absl::StrCat(target, ".graphgc-save-", ::getpid(), "-", next_staged++);
  if (!std::filesystem::create_directory(staged, ec)) {
    return ec ? FileError(ec, absl::StrCat("create ", staged))
              : absl::AlreadyExistsError(absl::StrCat(staged, " exists"));
  }
  absl::Status s = WriteNewFile(Join(staged, kWeightsFile), h5);
  if (s.ok()) s = WriteNewFile(Join(staged, kGraphFile), frozen->graph_bytes);
  if (s.ok()) s = WriteNewFile(Join(staged, kSignatureFile), frozen->signature);
  if (s.ok()) s = WriteNewFile(Join(staged, kConfigFile), config);
  if (s.ok()) {
    SyncDir(staged);
    s = Replace(staged, target);
  }
  if (!s.ok()) {
    std::filesystem::remove_all(staged, ec);
    return s;
  }
  SyncDir(parent.empty() ? std::string(".") : parent.string());
  return absl::OkStatus();
}

absl::Status SaveWeightsUnguarded(const Sequential& model,
                                  const std::string& path) {
  GG_RETURN_IF_ERROR(CheckPath(path, "SaveWeights path"));
  GG_ASSIGN_OR_RETURN(const ModelSnapshot snap, SavingAccess::Snapshot(model));
  const std::string where =
      absl::StrCat("SaveWeights of '", snap.name, "' to ", path);
  GG_ASSIGN_OR_RETURN(const std::string h5, WeightsBytes(snap, where));
  const std::filesystem::path parent =
      std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return FileError(ec, absl::StrCat(where, ": create ", parent.string()));
    }
  }
  // Written beside `path`, then renamed over it: a reader sees the old file
  // or the new one.
  const std::string staged =
      absl::StrCat(path, ".graphgc-save-", ::getpid(), "-", next_staged++);
  absl::Status s = WriteNewFile(staged, h5);
  if (s.ok() && ::rename(staged.c_str(), path.c_str()) != 0) {
    s = Errno(absl::StrCat("rename ", staged, " to ", path));
  }
  if (!s.ok()) {
    ::unlink(staged.c_str());
    return Annotate(s, where);
  }
  SyncDir(parent.empty() ? std::string(".") : parent.string());
  return absl::OkStatus();
}

absl::StatusOr<Sequential> LoadModelUnguarded(const std::string& dir,
                                              LoadOptions options) {
  GG_RETURN_IF_ERROR(CheckPath(dir, "LoadModel directory"));
  const std::string config_file = Join(dir, kConfigFile);
  const std::string weights_file = Join(dir, kWeightsFile);
  // Everything is read and checked before anything is built.
  GG_ASSIGN_OR_RETURN(const std::string text,
                      ReadRegularFile(config_file, kMaxJsonBytes));
  GG_ASSIGN_OR_RETURN(ParsedConfig parsed, ParseConfig(text, config_file));
  GG_ASSIGN_OR_RETURN(
      const LoadBudget budget,
      CheckLoadBudget(parsed.layers, OptimizerSlots(parsed.compile),
                      config_file, options.max_bytes));
  absl::StatusOr<std::string> read =
      ReadRegularFile(weights_file, budget.max_file_bytes);
  if (absl::IsResourceExhausted(read.status())) {
    return absl::ResourceExhaustedError(absl::StrCat(
        read.status().message(), ": ", config_file, " declares ",
        budget.weights_bytes,
        " bytes of weights, which with optimizer state and HDF5 metadata "
        "take at most ",
        budget.max_file_bytes, " bytes within the load budget of ",
        options.max_bytes, " bytes (LoadOptions::max_bytes)"));
  }
  GG_RETURN_IF_ERROR(read.status());
  const std::string& h5 = *read;
  GG_RETURN_IF_ERROR(CheckSavedLayers(h5, parsed.layers, weights_file));

  // From here a failure drops what was built: unreferenced, it goes at the
  // next collection.
  auto in = [](const std::string& file, const absl::Status& s) {
    return Annotate(s, file);
  };
  absl::StatusOr<Sequential> model = Sequential::Create(
      parsed.layers, {.name = parsed.name, .graph = options.graph});
  if (!model.ok()) return in(config_file, model.status());
  const std::vector<std::string> paths = WeightsPaths(model->layers());
  std::vector<LayerWeightsSpec> specs;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].empty()) continue;
    LayerWeightsSpec spec{.path = paths[i]};
    const BuiltLayer* built = SavingAccess::State(model->layers()[i])->built();
    if (built == nullptr) {
      return absl::InternalError(absl::StrCat(
          "LoadModel: layer ", i, " of the created model is not built"));
    }
    for (const auto& v : built->variables) spec.shapes.push_back(v.shape);
    specs.push_back(std::move(spec));
  }
  absl::StatusOr<std::vector<std::vector<Tensor>>> values =
      DecodeKerasWeights(h5, specs, weights_file);
  GG_RETURN_IF_ERROR(values.status());
  std::vector<Tensor> flat;
  for (auto& layer : *values) {
    for (Tensor& t : layer) flat.push_back(std::move(t));
  }
  GG_RETURN_IF_ERROR(
      SavingAccess::AssignWeights(*model, std::move(flat), weights_file));
  if (options.compile && parsed.compile.has_value()) {
    absl::Status s = model->Compile(*std::move(parsed.compile));
    if (!s.ok()) return in(config_file, s);
  }
  return model;
}

absl::StatusOr<Signature> ParseSignatureUnguarded(std::string_view text,
                                                  const std::string& file) {
  GG_ASSIGN_OR_RETURN(const Json root, ParseJson(text, file));
  if (!root.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": the top level must be an object, got ", Shown(root)));
  }
  const Object top(root, file);
  GG_ASSIGN_OR_RETURN(const Object inputs,
                      top.Child("inputs", file + ": inputs"));
  GG_ASSIGN_OR_RETURN(const Object outputs,
                      top.Child("outputs", file + ": outputs"));
  Signature out;
  GG_ASSIGN_OR_RETURN(out.input, ReadSignatureTensor(inputs, "x"));
  GG_ASSIGN_OR_RETURN(out.output, ReadSignatureTensor(outputs, "predictions"));
  return out;
}

absl::StatusOr<ModelConfigSummary> ParseModelConfigUnguarded(
    std::string_view json, const std::string& file, int64_t max_bytes) {
  GG_ASSIGN_OR_RETURN(const ParsedConfig parsed, ParseConfig(json, file));
  GG_ASSIGN_OR_RETURN(
      const LoadBudget budget,
      CheckLoadBudget(parsed.layers, OptimizerSlots(parsed.compile), file,
                      max_bytes));
  return ModelConfigSummary{
      .name = parsed.name,
      .num_layers = static_cast<int64_t>(parsed.layers.size()),
      .weights_bytes = budget.weights_bytes,
      .load_bytes = budget.load_bytes,
      .max_weights_file_bytes = budget.max_file_bytes};
}

}  // namespace

absl::StatusOr<Sequential> LoadModel(const std::string& dir,
                                     LoadOptions options) {
  return OutOfMemoryIsAStatus(absl::StrCat("LoadModel of ", dir),
                              [&] { return LoadModelUnguarded(dir, options); });
}

absl::StatusOr<Signature> ReadSignature(const std::string& dir) {
  return OutOfMemoryIsAStatus(
      absl::StrCat("ReadSignature of ", dir),
      [&]() -> absl::StatusOr<Signature> {
        GG_RETURN_IF_ERROR(CheckPath(dir, "ReadSignature directory"));
        const std::string file = Join(dir, kSignatureFile);
        GG_ASSIGN_OR_RETURN(const std::string text,
                            ReadRegularFile(file, kMaxJsonBytes));
        return ParseSignatureUnguarded(text, file);
      });
}

absl::Status Sequential::Save(const std::string& dir) const {
  return OutOfMemoryIsAStatus(absl::StrCat("Sequential::Save to ", dir),
                              [&] { return SaveUnguarded(*this, dir); });
}

absl::Status SaveWeights(const Sequential& model, const std::string& path) {
  return OutOfMemoryIsAStatus(absl::StrCat("SaveWeights to ", path), [&] {
    return SaveWeightsUnguarded(model, path);
  });
}

absl::StatusOr<Signature> ParseSignature(std::string_view json,
                                         const std::string& file) {
  return OutOfMemoryIsAStatus(
      file, [&] { return ParseSignatureUnguarded(json, file); });
}

absl::StatusOr<ModelConfigSummary> ParseModelConfig(std::string_view json,
                                                    const std::string& file,
                                                    int64_t max_bytes) {
  return OutOfMemoryIsAStatus(
      file, [&] { return ParseModelConfigUnguarded(json, file, max_bytes); });
}

}  // namespace graphgc
