// ModelFromJson: the config parsed and budgeted as LoadModel does, then the
// model created (and compiled) without reading weights.
#include "models/model_from_json.h"

#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/keras_json.h"
#include "models/load_budget.h"
#include "models/model_config.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {

using models_internal::CheckLoadBudget;
using models_internal::kMaxJsonBytes;
using models_internal::OptimizerSlots;
using models_internal::ParseConfig;
using models_internal::ParsedConfig;

namespace {

template <typename Model>
absl::StatusOr<LoadedModel> Finish(absl::StatusOr<Model> model,
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
  if (json.size() > kMaxJsonBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(file, ": ", json.size(), " bytes of JSON, more than ",
                     kMaxJsonBytes, " bytes"));
  }
  // Checked whole, and its weights counted against the budget, before
  // anything is built.
  GG_ASSIGN_OR_RETURN(ParsedConfig parsed, ParseConfig(json, file));
  const int slots = OptimizerSlots(parsed.compile);
  absl::StatusOr<models_internal::LoadBudget> budget =
      parsed.functional
          ? CheckLoadBudget(parsed.layers, parsed.weights_input_shapes,
                            parsed.layers.size(), slots, file,
                            options.max_bytes)
          : CheckLoadBudget(parsed.layers, slots, file, options.max_bytes);
  GG_RETURN_IF_ERROR(budget.status());
  if (!parsed.functional) {
    return Finish(Sequential::Create(parsed.layers, {.name = parsed.name,
                                                     .graph = options.graph}),
                  parsed, options, file);
  }
  return Finish(
      Functional::Create(parsed.inputs, parsed.outputs,
                         {.name = parsed.name, .graph = options.graph}),
      parsed, options, file);
}

}  // namespace

absl::StatusOr<LoadedModel> ModelFromJson(std::string_view json,
                                          LoadOptions options,
                                          const std::string& file) {
  try {
    return ModelFromJsonUnguarded(json, options, file);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("ModelFromJson of ", file, ": out of memory"));
  }
}

}  // namespace graphgc
