#include "models/layers/recurrent.h"

#include "absl/strings/str_cat.h"
#include "ops/concat_ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

namespace {

constexpr const char* kRegularizersAndConstraints[] = {
    "kernel_regularizer",   "recurrent_regularizer", "bias_regularizer",
    "activity_regularizer", "kernel_constraint",     "recurrent_constraint",
    "bias_constraint"};

// An activation field: absent is `fallback`, null is Keras's None (linear).
absl::StatusOr<std::string> ActivationField(const ConfigObject& config,
                                            const char* key,
                                            const std::string& fallback) {
  const Json* j = config.Find(key);
  if (j == nullptr) return fallback;
  if (j->is_null()) return std::string("linear");
  return config.String(key);
}

}  // namespace

void WriteRecurrentConfig(const RecurrentFields& f, Json& c) {
  c["return_sequences"] = f.return_sequences;
  c["return_state"] = f.return_state;
  c["go_backwards"] = f.go_backwards;
  c["stateful"] = false;
  c["unroll"] = false;
  c["zero_output_for_mask"] = false;
  c["activation"] = ActivationName(f.activation);
  c["recurrent_activation"] = ActivationName(f.recurrent_activation);
  c["use_bias"] = f.use_bias;
  for (const char* k : kRegularizersAndConstraints) c[k] = nullptr;
  c["dropout"] = FloatJson(f.dropout);
  c["recurrent_dropout"] = FloatJson(f.recurrent_dropout);
  c["seed"] = f.seed == 0 ? Json(nullptr) : Json(f.seed);
}

absl::Status ReadRecurrentConfig(const ConfigObject& config,
                                 RecurrentFields& f) {
  GG_ASSIGN_OR_RETURN(f.activation,
                      ActivationField(config, "activation", f.activation));
  GG_ASSIGN_OR_RETURN(
      f.recurrent_activation,
      ActivationField(config, "recurrent_activation", f.recurrent_activation));
  GG_ASSIGN_OR_RETURN(f.use_bias, config.Bool("use_bias", true));
  GG_ASSIGN_OR_RETURN(f.return_sequences,
                      config.Bool("return_sequences", false));
  GG_ASSIGN_OR_RETURN(f.return_state, config.Bool("return_state", false));
  GG_ASSIGN_OR_RETURN(f.go_backwards, config.Bool("go_backwards", false));
  GG_ASSIGN_OR_RETURN(f.dropout, config.Float("dropout", 0.f));
  GG_ASSIGN_OR_RETURN(f.recurrent_dropout,
                      config.Float("recurrent_dropout", 0.f));
  GG_ASSIGN_OR_RETURN(f.name, config.String("name", ""));
  GG_ASSIGN_OR_RETURN(f.seed, config.Seed("seed"));
  // unroll changes how Keras runs the loop, not what it computes.
  GG_RETURN_IF_ERROR(config.Bool("unroll", false).status());
  GG_RETURN_IF_ERROR(config.Only("stateful", false));
  for (const char* k : kRegularizersAndConstraints) {
    GG_RETURN_IF_ERROR(config.Only(k, nullptr));
  }
  return absl::OkStatus();
}

absl::Status CheckRecurrent(const LayerState& layer, int64_t units,
                            const RecurrentFields& f) {
  const std::string label = LayerLabel(layer);
  // The weights are sized by a multiple of units; CheckFits bounds them by
  // memory when built.
  constexpr int64_t kMaxUnits = int64_t{1} << 40;
  if (units < 1 || units > kMaxUnits) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": units must be in [1, ", kMaxUnits, "], got ", units));
  }
  if (!KnownActivation(f.activation)) {
    return UnknownActivation(layer, f.activation);
  }
  if (!KnownActivation(f.recurrent_activation)) {
    return UnknownActivation(layer, f.recurrent_activation);
  }
  if (f.return_state) {
    return absl::UnimplementedError(absl::StrCat(
        label,
        ": return_state=True is not implemented: a layer call returns one "
        "tensor in graphgc's functional API (use return_state=False)"));
  }
  if (f.dropout != 0.f) {
    return absl::UnimplementedError(
        absl::StrCat(label, ": dropout=", f.dropout,
                     " is not implemented (use dropout=0, or a Dropout "
                     "layer before it)"));
  }
  if (f.recurrent_dropout != 0.f) {
    return absl::UnimplementedError(
        absl::StrCat(label, ": recurrent_dropout=", f.recurrent_dropout,
                     " is not implemented (use recurrent_dropout=0)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorShape> RecurrentOutputShape(const LayerState& layer,
                                                 const TensorShape& in,
                                                 int64_t units,
                                                 bool return_sequences) {
  if (in.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer),
        ": takes sequences [batch, timesteps, features], (None, steps, n), "
        "but gets ",
        KerasShape(in)));
  }
  if (in[0] < 1 || in[1] < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": needs a known number of timesteps and features",
        " (it is unrolled over the timesteps), but gets ", KerasShape(in),
        "; give the Input a shape such as (80, ",
        in[1] < 1 ? std::string("features") : absl::StrCat(in[1]), ")"));
  }
  if (return_sequences) return TensorShape({in[0], units});
  return TensorShape({units});
}

std::string RecurrentRebuilt(const std::string& name, const TensorShape& built,
                             const TensorShape& in) {
  return absl::StrCat("layer '", name, "' was built for inputs ",
                      KerasShape(built), " but gets ", KerasShape(in));
}

uint64_t NextSeed(uint64_t seed) {
  if (seed == 0) return 0;
  return seed + 1 == 0 ? 1 : seed + 1;
}

absl::StatusOr<Output> ProjectSteps(const Output& x, const Output& kernel,
                                    const Output* bias, int64_t steps,
                                    int64_t features, int64_t width,
                                    const std::string& scope) {
  GG_ASSIGN_OR_RETURN(Output rows, ops::Reshape(x, {-1, features},
                                                {.name = scope + "/Reshape"}));
  GG_ASSIGN_OR_RETURN(Output xz,
                      ops::MatMul(rows, kernel, {.name = scope + "/MatMul"}));
  if (bias != nullptr) {
    GG_ASSIGN_OR_RETURN(xz,
                        ops::BiasAdd(xz, *bias, {.name = scope + "/BiasAdd"}));
  }
  return ops::Reshape(xz, {-1, steps, width}, {.name = scope + "/Reshape_1"});
}

absl::StatusOr<Output> StepRows(const Output& projected, int64_t t,
                                int64_t width, const std::string& at) {
  GG_ASSIGN_OR_RETURN(Output z, ops::Slice(projected, {0, t, 0}, {-1, 1, width},
                                           {.name = at + "/Slice"}));
  return ops::Reshape(z, {-1, width}, {.name = at + "/Reshape"});
}

absl::StatusOr<Output> Columns(const Output& z, int64_t k, int64_t width,
                               const std::string& name) {
  return ops::Slice(z, {0, k * width}, {-1, width}, {.name = name});
}

absl::StatusOr<LayerOutputs> RecurrentOutputs(
    const Output& h, const std::vector<Output>& sequence, int64_t units,
    const std::string& scope) {
  Output y = h;
  if (!sequence.empty()) {
    std::vector<Output> steps;
    for (size_t s = 0; s < sequence.size(); ++s) {
      GG_ASSIGN_OR_RETURN(Output h3,
                          ops::Reshape(sequence[s], {-1, 1, units},
                                       {.name = absl::StrCat(scope, "/step_", s,
                                                             "/ExpandDims")}));
      steps.push_back(h3);
    }
    if (steps.size() == 1) {
      y = steps[0];
    } else {
      GG_ASSIGN_OR_RETURN(y,
                          ops::ConcatV2(steps, 1, {.name = scope + "/concat"}));
    }
  }
  return LayerOutputs{.pre_activation = y, .output = y};
}

}  // namespace models_internal
}  // namespace graphgc
