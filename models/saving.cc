// Save, SaveWeights and LoadModel as orchestration: each file's codec lives
// beside this one (model_config, compile_config, the layer registry,
// model_weights, signature, load_budget; keras_json for the JSON they
// share), file staging and atomic replacement in util/file.h.
#include "models/saving.h"

#include <filesystem>
#include <map>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/keras_json.h"
#include "models/load_budget.h"
#include "models/model_config.h"
#include "models/model_from_json.h"
#include "models/model_weights.h"
#include "models/optimizer_state.h"
#include "models/out_of_memory.h"
#include "models/saving_access.h"
#include "models/signature.h"
#include "util/file.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {

using models_internal::CheckLoadBudget;
using models_internal::ConfigJson;
using models_internal::DecodeModelWeights;
using models_internal::Freeze;
using models_internal::FrozenModel;
using models_internal::Json;
using models_internal::kMaxJsonBytes;
using models_internal::LayerState;
using models_internal::LoadBudget;
using models_internal::ModelSnapshot;
using models_internal::OptimizerSlots;
using models_internal::ParseConfig;
using models_internal::ParsedConfig;
using models_internal::ParseSignatureUnguarded;
using models_internal::RestoreOptimizerState;
using models_internal::SavingAccess;
using models_internal::WeightsBytes;
using models_internal::WeightsPaths;

using models_internal::OutOfMemoryIsAStatus;

namespace {

constexpr char kConfigFile[] = "config.json";
constexpr char kWeightsFile[] = "model.weights.h5";
constexpr char kGraphFile[] = "model.pb";
constexpr char kSignatureFile[] = "signature.json";

std::string Join(const std::string& dir, const char* file) {
  return absl::StrCat(dir, "/", file);
}

bool IsSaveFile(const std::string& name) {
  return name == kConfigFile || name == kWeightsFile || name == kGraphFile ||
         name == kSignatureFile;
}

// "Sequential::Save" or "Functional::Save": the model's kind, whichever
// handle reached it.
std::string SaveName(const ModelSnapshot& snap) {
  return absl::StrCat(snap.class_name, "::Save");
}

// OK when the existing directory `dir` holds only the files Save writes
// (nothing else is deleted when Save replaces it); `who` names the caller.
absl::Status CheckIsModelDirectory(const std::string& dir,
                                   const std::string& who) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!IsSaveFile(entry.path().filename().string()) ||
        !entry.is_regular_file(ec)) {
      return absl::FailedPreconditionError(absl::StrCat(
          who, ": ", dir, " holds '", entry.path().filename().string(),
          "', which Save did not write; Save replaces the directory whole "
          "and deletes nothing else: choose another directory"));
    }
  }
  if (ec) return FileError(ec, absl::StrCat("list ", dir));
  return absl::OkStatus();
}

// `model` is a Sequential or a Functional's engine handle; `who` names the
// call until the snapshot says which.
absl::Status SaveUnguarded(const Sequential& model, const std::string& dir,
                           const char* who) {
  GG_RETURN_IF_ERROR(CheckPath(dir, absl::StrCat(who, " directory")));
  GG_ASSIGN_OR_RETURN(const ModelSnapshot snap, SavingAccess::Snapshot(model));
  const std::string save = SaveName(snap);
  const std::string where =
      absl::StrCat(save, " of '", snap.name, "' to ", dir);
  if (snap.graph.inputs.size() != 1 || snap.graph.outputs.size() != 1) {
    return absl::UnimplementedError(absl::StrCat(
        where, ": saving a model of ", snap.graph.inputs.size(), " inputs and ",
        snap.graph.outputs.size(),
        " outputs is not implemented yet (its GraphDef signature has one "
        "input and one output); SaveWeights works"));
  }
  // Everything is made in memory first: a failure writes nothing.
  GG_ASSIGN_OR_RETURN(std::string h5, WeightsBytes(snap, where));
  std::string config =
      ConfigJson(snap).dump(2, ' ', false, Json::error_handler_t::replace) +
      "\n";
  absl::StatusOr<FrozenModel> frozen = Freeze(snap);
  if (!frozen.ok()) {
    return Annotate(frozen.status(), where);
  }
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back(kWeightsFile, std::move(h5));
  files.emplace_back(kGraphFile, std::move(frozen->graph_bytes));
  files.emplace_back(kSignatureFile, std::move(frozen->signature));
  files.emplace_back(kConfigFile, std::move(config));
  // Staged in a sibling directory, then swapped in.
  return WriteDirectoryAtomically(
      dir, absl::StrCat(save, " directory"), files,
      [&](const std::string& d) { return CheckIsModelDirectory(d, save); });
}

absl::Status SaveWeightsUnguarded(const Sequential& model,
                                  const std::string& path) {
  GG_RETURN_IF_ERROR(CheckPath(path, "SaveWeights path"));
  GG_ASSIGN_OR_RETURN(const ModelSnapshot snap, SavingAccess::Snapshot(model));
  const std::string where =
      absl::StrCat("SaveWeights of '", snap.name, "' to ", path);
  GG_ASSIGN_OR_RETURN(const std::string h5, WeightsBytes(snap, where));
  return Annotate(WriteFileAtomically(path, h5), where);
}

// The load budget of a parsed config (see models/saving.h).
absl::StatusOr<LoadBudget> BudgetOf(const ParsedConfig& parsed,
                                    const std::string& file,
                                    int64_t max_bytes) {
  const int slots = OptimizerSlots(parsed.compile);
  if (parsed.functional) {
    return CheckLoadBudget(parsed.layers, parsed.weights_input_shapes,
                           parsed.layers.size(), slots, file, max_bytes);
  }
  return CheckLoadBudget(parsed.layers, slots, file, max_bytes);
}

// Which kinds of model a load takes.
enum class Want { kSequential, kFunctional, kAny };

absl::Status WrongKind(const std::string& config_file, bool functional,
                       const char* call) {
  return absl::InvalidArgumentError(absl::StrCat(
      config_file, ": holds a ", functional ? "Functional" : "Sequential",
      " model, which ", call, " does not return; LoadAnyModel loads either"));
}

// The model of either kind, whose weights, once read, are set on it through
// `handle` (a Sequential, or a Functional's engine handle).
template <typename Model>
absl::Status FinishLoad(Model& model, Sequential handle, ParsedConfig& parsed,
                        const std::string& h5, const std::vector<Layer>& layers,
                        const std::vector<std::string>& paths,
                        const LoadOptions& options,
                        const std::string& config_file,
                        const std::string& weights_file) {
  GG_ASSIGN_OR_RETURN(std::vector<Tensor> weights,
                      DecodeModelWeights(h5, layers, paths, weights_file));
  GG_RETURN_IF_ERROR(
      SavingAccess::AssignWeights(handle, std::move(weights), weights_file));
  if (options.compile && parsed.compile.has_value()) {
    absl::Status s = model.Compile(*std::move(parsed.compile));
    if (!s.ok()) return Annotate(s, config_file);
    // Keras's optimizer state, when the file holds this optimizer's.
    GG_RETURN_IF_ERROR(
        RestoreOptimizerState(handle, h5, weights_file).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadedModel> LoadUnguarded(const std::string& dir,
                                          LoadOptions options, Want want,
                                          const char* call) {
  GG_RETURN_IF_ERROR(CheckPath(dir, absl::StrCat(call, " directory")));
  const std::string config_file = Join(dir, kConfigFile);
  const std::string weights_file = Join(dir, kWeightsFile);
  // Both files are read, and the config checked, before anything is built.
  GG_ASSIGN_OR_RETURN(const std::string text,
                      ReadRegularFile(config_file, kMaxJsonBytes));
  GG_ASSIGN_OR_RETURN(ParsedConfig parsed, ParseConfig(text, config_file));
  if ((want == Want::kSequential && parsed.functional) ||
      (want == Want::kFunctional && !parsed.functional)) {
    return WrongKind(config_file, parsed.functional, call);
  }
  GG_ASSIGN_OR_RETURN(const LoadBudget budget,
                      BudgetOf(parsed, config_file, options.max_bytes));
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

  // From here a failure drops what was built: unreferenced, it goes at the
  // next collection. The weights file is opened once, to check its layer
  // groups against the model's and read the weights, which needs the
  // model's built shapes.
  if (!parsed.functional) {
    absl::StatusOr<Sequential> model = Sequential::Create(
        parsed.layers, {.name = parsed.name, .graph = options.graph});
    if (!model.ok()) return Annotate(model.status(), config_file);
    GG_RETURN_IF_ERROR(
        FinishLoad(*model, *model, parsed, h5, model->layers(),
                   WeightsPaths(model->layers(), /*functional=*/false), options,
                   config_file, weights_file));
    return LoadedModel(*std::move(model));
  }
  absl::StatusOr<Functional> model =
      Functional::Create(parsed.inputs, parsed.outputs,
                         {.name = parsed.name, .graph = options.graph});
  if (!model.ok()) return Annotate(model.status(), config_file);
  // The weights groups are named in the config's layer order, as Keras
  // names them; the model lists its layers in call order.
  const std::vector<std::string> config_paths =
      WeightsPaths(parsed.layers, /*functional=*/true);
  std::map<const LayerState*, std::string> path_of;
  for (size_t i = 0; i < parsed.layers.size(); ++i) {
    path_of[SavingAccess::State(parsed.layers[i])] = config_paths[i];
  }
  std::vector<std::string> paths;
  for (const Layer& layer : model->layers()) {
    auto it = path_of.find(SavingAccess::State(layer));
    paths.push_back(it == path_of.end() ? std::string() : it->second);
  }
  GG_RETURN_IF_ERROR(FinishLoad(*model, SavingAccess::Handle(*model), parsed,
                                h5, model->layers(), paths, options,
                                config_file, weights_file));
  return LoadedModel(*std::move(model));
}

// A model built from a parsed config, compiled as it asks when
// options.compile is set; no weights are read (ModelFromJson).
template <typename Model>
absl::StatusOr<LoadedModel> Unweighted(absl::StatusOr<Model> model,
                                       ParsedConfig& parsed,
                                       const LoadOptions& options,
                                       const std::string& file) {
  if (!model.ok()) return Annotate(model.status(), file);
  if (options.compile && parsed.compile.has_value()) {
    absl::Status s = model->Compile(*std::move(parsed.compile));
    if (!s.ok()) return Annotate(s, file);
  }
  return LoadedModel(*std::move(model));
}

absl::StatusOr<LoadedModel> ModelFromJsonUnguarded(std::string_view json,
                                                   const LoadOptions& options,
                                                   const std::string& file) {
  // Checked whole, and its weights counted against the budget, before
  // anything is built.
  GG_ASSIGN_OR_RETURN(ParsedConfig parsed, ParseConfig(json, file));
  GG_RETURN_IF_ERROR(BudgetOf(parsed, file, options.max_bytes).status());
  if (!parsed.functional) {
    return Unweighted(
        Sequential::Create(parsed.layers,
                           {.name = parsed.name, .graph = options.graph}),
        parsed, options, file);
  }
  return Unweighted(
      Functional::Create(parsed.inputs, parsed.outputs,
                         {.name = parsed.name, .graph = options.graph}),
      parsed, options, file);
}

absl::StatusOr<ModelConfigSummary> ParseModelConfigUnguarded(
    std::string_view json, const std::string& file, int64_t max_bytes) {
  GG_ASSIGN_OR_RETURN(const ParsedConfig parsed, ParseConfig(json, file));
  GG_ASSIGN_OR_RETURN(const LoadBudget budget,
                      BudgetOf(parsed, file, max_bytes));
  return ModelConfigSummary{
      .name = parsed.name,
      .num_layers = static_cast<int64_t>(parsed.layers.size()),
      .weights_bytes = budget.weights_bytes,
      .load_bytes = budget.load_bytes,
      .max_weights_file_bytes = budget.max_file_bytes};
}

}  // namespace

absl::StatusOr<std::string> ModelToJson(const Sequential& model) {
  return ModelToJson(model, ScopeRenaming());
}

absl::StatusOr<std::string> ModelToJson(const Functional& model) {
  return ModelToJson(SavingAccess::Handle(model), ScopeRenaming());
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

absl::StatusOr<Sequential> LoadModel(const std::string& dir,
                                     LoadOptions options) {
  return OutOfMemoryIsAStatus(
      absl::StrCat("LoadModel of ", dir), [&]() -> absl::StatusOr<Sequential> {
        GG_ASSIGN_OR_RETURN(
            LoadedModel model,
            LoadUnguarded(dir, options, Want::kSequential, "LoadModel"));
        return std::get<Sequential>(std::move(model));
      });
}

absl::StatusOr<Functional> LoadFunctional(const std::string& dir,
                                          LoadOptions options) {
  return OutOfMemoryIsAStatus(
      absl::StrCat("LoadFunctional of ", dir),
      [&]() -> absl::StatusOr<Functional> {
        GG_ASSIGN_OR_RETURN(
            LoadedModel model,
            LoadUnguarded(dir, options, Want::kFunctional, "LoadFunctional"));
        return std::get<Functional>(std::move(model));
      });
}

absl::StatusOr<LoadedModel> LoadAnyModel(const std::string& dir,
                                         LoadOptions options) {
  return OutOfMemoryIsAStatus(absl::StrCat("LoadAnyModel of ", dir), [&] {
    return LoadUnguarded(dir, options, Want::kAny, "LoadAnyModel");
  });
}

absl::StatusOr<LoadedModel> ModelFromJson(std::string_view json,
                                          LoadOptions options,
                                          const std::string& file) {
  return OutOfMemoryIsAStatus(absl::StrCat("ModelFromJson of ", file), [&] {
    return ModelFromJsonUnguarded(json, options, file);
  });
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
  return OutOfMemoryIsAStatus(absl::StrCat("Sequential::Save to ", dir), [&] {
    return SaveUnguarded(*this, dir, "Sequential::Save");
  });
}

absl::Status Functional::Save(const std::string& dir) const {
  if (state_ == nullptr) {
    return absl::FailedPreconditionError(
        "Functional::Save: the model was moved from (use the object it was "
        "moved to)");
  }
  return OutOfMemoryIsAStatus(absl::StrCat("Functional::Save to ", dir), [&] {
    return SaveUnguarded(SavingAccess::Handle(*this), dir, "Functional::Save");
  });
}

absl::Status SaveWeights(const Sequential& model, const std::string& path) {
  return OutOfMemoryIsAStatus(absl::StrCat("SaveWeights to ", path), [&] {
    return SaveWeightsUnguarded(model, path);
  });
}

absl::Status SaveWeights(const Functional& model, const std::string& path) {
  return SaveWeights(SavingAccess::Handle(model), path);
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
