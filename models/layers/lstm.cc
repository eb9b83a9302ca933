// LSTM (Keras 3's keras.layers.LSTM with its LSTMCell): for each step t of
// [batch, timesteps, features] inputs, from h = c = 0,
//   z = x_t @ kernel + h @ recurrent_kernel + bias  (gates i, f, c, o)
//   c = sig(z_f) * c + sig(z_i) * act(z_c),  h = sig(z_o) * act(c)
// with sig the recurrent_activation (sigmoid) and act the activation
// (tanh). The steps are unrolled in the graph: the inputs of every step go
// through the kernel in one MatMul, each step Slices its rows out and adds
// one MatMul of h by the recurrent kernel (none at the first step, where h
// and c are zero). The weights live in Keras's cell, so model.weights.h5
// holds them under "layers/lstm/cell/vars".
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/recurrent_layers.h"
#include "models/training.h"
#include "ops/concat_ops.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct LSTMConfig : LayerConfig {
  int64_t units = 0;
  LSTMOptions options;
};

const LSTMConfig& Config(const LayerState& layer) {
  return ConfigOf<LSTMConfig>(layer);
}

Json WriteLSTMConfig(const LayerState& layer, const std::string& name) {
  const LSTMConfig& l = Config(layer);
  const LSTMOptions& o = l.options;
  Json c = CommonConfig(name);
  c["return_sequences"] = o.return_sequences;
  c["return_state"] = o.return_state;
  c["go_backwards"] = o.go_backwards;
  c["stateful"] = false;
  c["unroll"] = false;
  c["zero_output_for_mask"] = false;
  c["units"] = l.units;
  c["activation"] = ActivationName(o.activation);
  c["recurrent_activation"] = ActivationName(o.recurrent_activation);
  c["use_bias"] = o.use_bias;
  c["kernel_initializer"] = InitializerJson("GlorotUniform");
  c["recurrent_initializer"] = KerasObject("keras.initializers", "Orthogonal",
                                           {{"gain", 1.0}, {"seed", nullptr}});
  c["bias_initializer"] = InitializerJson("Zeros");
  c["unit_forget_bias"] = o.unit_forget_bias;
  for (const char* k :
       {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
        "activity_regularizer", "kernel_constraint", "recurrent_constraint",
        "bias_constraint"}) {
    c[k] = nullptr;
  }
  c["dropout"] = FloatJson(o.dropout);
  c["recurrent_dropout"] = FloatJson(o.recurrent_dropout);
  c["seed"] = o.seed == 0 ? Json(nullptr) : Json(o.seed);
  return c;
}

// An activation field: absent is `fallback`, null is Keras's None (linear).
absl::StatusOr<std::string> ActivationField(const ConfigObject& config,
                                            const char* key,
                                            const std::string& fallback) {
  const Json* j = config.Find(key);
  if (j == nullptr) return fallback;
  if (j->is_null()) return std::string("linear");
  return config.String(key);
}

absl::StatusOr<Layer> ReadLSTMConfig(const ConfigObject& config) {
  LSTMOptions o;
  GG_ASSIGN_OR_RETURN(const int64_t units, config.Int("units"));
  GG_ASSIGN_OR_RETURN(o.activation,
                      ActivationField(config, "activation", "tanh"));
  GG_ASSIGN_OR_RETURN(
      o.recurrent_activation,
      ActivationField(config, "recurrent_activation", "sigmoid"));
  GG_ASSIGN_OR_RETURN(o.use_bias, config.Bool("use_bias", true));
  GG_ASSIGN_OR_RETURN(o.unit_forget_bias,
                      config.Bool("unit_forget_bias", true));
  GG_ASSIGN_OR_RETURN(o.return_sequences,
                      config.Bool("return_sequences", false));
  GG_ASSIGN_OR_RETURN(o.return_state, config.Bool("return_state", false));
  GG_ASSIGN_OR_RETURN(o.go_backwards, config.Bool("go_backwards", false));
  GG_ASSIGN_OR_RETURN(o.dropout, config.Float("dropout", 0.f));
  GG_ASSIGN_OR_RETURN(o.recurrent_dropout,
                      config.Float("recurrent_dropout", 0.f));
  GG_ASSIGN_OR_RETURN(o.name, config.String("name", ""));
  GG_ASSIGN_OR_RETURN(o.seed, config.Seed("seed"));
  // unroll changes how Keras runs the loop, not what it computes.
  GG_ASSIGN_OR_RETURN(const bool unroll, config.Bool("unroll", false));
  (void)unroll;
  GG_RETURN_IF_ERROR(config.Only("stateful", false));
  for (const char* k :
       {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
        "activity_regularizer", "kernel_constraint", "recurrent_constraint",
        "bias_constraint"}) {
    GG_RETURN_IF_ERROR(config.Only(k, nullptr));
  }
  return layers::LSTM(units, std::move(o));
}

absl::StatusOr<TensorShape> LSTMOutputShape(const LayerState& layer,
                                            const TensorShape& in) {
  const LSTMConfig& c = Config(layer);
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
  if (c.options.return_sequences) return TensorShape({in[0], c.units});
  return TensorShape({c.units});
}

// A non-zero seed derived from `seed` for a second initialiser (0 stays 0:
// a fresh seed).
uint64_t NextSeed(uint64_t seed) {
  if (seed == 0) return 0;
  return seed + 1 == 0 ? 1 : seed + 1;
}

std::vector<WeightSpec> LSTMWeights(const LayerState& layer,
                                    const TensorShape& in) {
  const LSTMConfig& c = Config(layer);
  const int64_t gates = 4 * c.units;  // the builder bounds units
  std::vector<WeightSpec> out = {{.name = "kernel",
                                  .shape = {in[1], gates},
                                  .init = Initializer::kGlorotUniform,
                                  .fan_in = in[1],
                                  .fan_out = gates,
                                  .seed = c.options.seed},
                                 {.name = "recurrent_kernel",
                                  .shape = {c.units, gates},
                                  .init = Initializer::kOrthogonal,
                                  .seed = NextSeed(c.options.seed)}};
  if (c.options.use_bias) {
    out.push_back({.name = "bias",
                   .shape = {gates},
                   .init = c.options.unit_forget_bias
                               ? Initializer::kUnitForgetBias
                               : Initializer::kZeros});
  }
  return out;
}

absl::Status CheckLSTMWeights(const LayerState& layer, const TensorShape& in) {
  const int64_t units = Config(layer).units;
  const std::string what = absl::StrCat(LayerLabel(layer), " of ", units,
                                        " units on ", in[1], " features, its ");
  GG_RETURN_IF_ERROR(
      CheckFits(DT_FLOAT, {in[1], 4 * units}, 1, what + "kernel"));
  return CheckFits(DT_FLOAT, {units, 4 * units}, 1, what + "recurrent_kernel");
}

std::string LSTMRebuilt(const std::string& name, const TensorShape& built,
                        const TensorShape& in) {
  return absl::StrCat("layer '", name, "' was built for inputs ",
                      KerasShape(built), " but gets ", KerasShape(in));
}

absl::StatusOr<LayerOutputs> ApplyLSTM(const LayerState& layer,
                                       const BuiltLayer& built, const Output& x,
                                       bool) {
  const LSTMConfig& c = Config(layer);
  const LSTMOptions& o = c.options;
  const std::string& scope = built.name();
  const int64_t steps = built.shape[0], features = built.shape[1];
  const int64_t u = c.units, gates = 4 * u;
  const Output& kernel = built.variables[0].read;
  const Output& recurrent = built.variables[1].read;
  // Every step's inputs through the kernel at once.
  GG_ASSIGN_OR_RETURN(Output rows, ops::Reshape(x, {-1, features},
                                                {.name = scope + "/Reshape"}));
  GG_ASSIGN_OR_RETURN(Output xz,
                      ops::MatMul(rows, kernel, {.name = scope + "/MatMul"}));
  if (o.use_bias) {
    GG_ASSIGN_OR_RETURN(xz, ops::BiasAdd(xz, built.variables[2].read,
                                         {.name = scope + "/BiasAdd"}));
  }
  GG_ASSIGN_OR_RETURN(
      xz, ops::Reshape(xz, {-1, steps, gates}, {.name = scope + "/Reshape_1"}));
  Output h, cell;
  std::vector<Output> sequence;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = o.go_backwards ? steps - 1 - s : s;
    const std::string at = absl::StrCat(scope, "/step_", s);
    GG_ASSIGN_OR_RETURN(Output z, ops::Slice(xz, {0, t, 0}, {-1, 1, gates},
                                             {.name = at + "/Slice"}));
    GG_ASSIGN_OR_RETURN(
        z, ops::Reshape(z, {-1, gates}, {.name = at + "/Reshape"}));
    if (s > 0) {
      GG_ASSIGN_OR_RETURN(Output hz,
                          ops::MatMul(h, recurrent, {.name = at + "/MatMul"}));
      GG_ASSIGN_OR_RETURN(z, ops::AddV2(z, hz, {.name = at + "/add"}));
    }
    auto gate = [&](int k, const std::string& act,
                    const char* g) -> absl::StatusOr<Output> {
      GG_ASSIGN_OR_RETURN(Output zk, ops::Slice(z, {0, k * u}, {-1, u},
                                                {.name = at + "/Slice_" + g}));
      return ApplyActivation(act, zk, at + "/" + g);
    };
    GG_ASSIGN_OR_RETURN(Output i, gate(0, o.recurrent_activation, "i"));
    GG_ASSIGN_OR_RETURN(Output g, gate(2, o.activation, "c"));
    GG_ASSIGN_OR_RETURN(Output ig, ops::Mul(i, g, {.name = at + "/mul"}));
    if (s == 0) {
      cell = ig;  // f * c vanishes with c = 0
    } else {
      GG_ASSIGN_OR_RETURN(Output f, gate(1, o.recurrent_activation, "f"));
      GG_ASSIGN_OR_RETURN(Output fc,
                          ops::Mul(f, cell, {.name = at + "/mul_1"}));
      GG_ASSIGN_OR_RETURN(cell, ops::AddV2(fc, ig, {.name = at + "/add_1"}));
    }
    GG_ASSIGN_OR_RETURN(Output out, gate(3, o.recurrent_activation, "o"));
    GG_ASSIGN_OR_RETURN(Output ac,
                        ApplyActivation(o.activation, cell, at + "/state"));
    GG_ASSIGN_OR_RETURN(h, ops::Mul(out, ac, {.name = at + "/mul_2"}));
    if (o.return_sequences) {
      GG_ASSIGN_OR_RETURN(
          Output h3, ops::Reshape(h, {-1, 1, u}, {.name = at + "/Reshape_1"}));
      sequence.push_back(h3);
    }
  }
  Output y = h;
  if (o.return_sequences) {
    // Keras stacks the outputs in the order the steps ran.
    if (sequence.size() == 1) {
      y = sequence[0];
    } else {
      GG_ASSIGN_OR_RETURN(
          y, ops::ConcatV2(sequence, 1, {.name = scope + "/concat"}));
    }
  }
  return LayerOutputs{.pre_activation = y, .output = y};
}

int64_t LSTMUnits(const LayerState& layer) { return Config(layer).units; }

const LayerKind& LSTMKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "LSTM",
      .default_name = "lstm",
      .order = 60,
      .weights_group = "lstm",
      .weights_subgroup = "cell",
      .fields = {{"units", "int32", ""},
                 {"activation", "activation", "\"tanh\""},
                 {"recurrent_activation", "activation", "\"sigmoid\""},
                 {"use_bias", "bool", "true"},
                 {"unit_forget_bias", "bool", "true"},
                 {"dropout", "float", "0.0"},
                 {"recurrent_dropout", "float", "0.0"},
                 {"seed", "seed", "null"},
                 {"return_sequences", "bool", "false"},
                 {"return_state", "bool", "false"},
                 {"go_backwards", "bool", "false"},
                 {"stateful", "bool", "false"},
                 {"unroll", "bool", "false"},
                 {"name", "name", "null"}},
      .write_config = WriteLSTMConfig,
      .read_config = ReadLSTMConfig,
      .output_shape = LSTMOutputShape,
      .weights = LSTMWeights,
      .check_weights = CheckLSTMWeights,
      .rebuilt_message = LSTMRebuilt,
      .apply = ApplyLSTM,
      .units = LSTMUnits,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(LSTMKind);
}  // namespace models_internal

namespace layers {

Layer LSTM(int64_t units, LSTMOptions options) {
  using models_internal::LSTMConfig;
  auto config = std::make_unique<LSTMConfig>();
  config->units = units;
  config->options = std::move(options);
  const LSTMConfig& c = *config;
  auto state = models_internal::NewLayerState(
      models_internal::LSTMKind(), c.options.name, std::move(config));
  const std::string label = models_internal::LayerLabel(*state);
  const LSTMOptions& o = c.options;
  absl::Status s;
  // 4 * units sizes the weights; CheckFits bounds them by memory later.
  constexpr int64_t kMaxUnits = int64_t{1} << 40;
  if (units < 1 || units > kMaxUnits) {
    s = absl::InvalidArgumentError(absl::StrCat(
        label, ": units must be in [1, ", kMaxUnits, "], got ", units));
  } else if (!models_internal::KnownActivation(o.activation)) {
    s = models_internal::UnknownActivation(*state, o.activation);
  } else if (!models_internal::KnownActivation(o.recurrent_activation)) {
    s = models_internal::UnknownActivation(*state, o.recurrent_activation);
  } else if (o.return_state) {
    s = absl::UnimplementedError(absl::StrCat(
        label,
        ": return_state=True is not implemented: a layer call returns one "
        "tensor in graphgc's functional API (use return_state=False)"));
  } else if (o.dropout != 0.f) {
    s = absl::UnimplementedError(
        absl::StrCat(label, ": dropout=", o.dropout,
                     " is not implemented (use dropout=0, or a Dropout "
                     "layer before it)"));
  } else if (o.recurrent_dropout != 0.f) {
    s = absl::UnimplementedError(
        absl::StrCat(label, ": recurrent_dropout=", o.recurrent_dropout,
                     " is not implemented (use recurrent_dropout=0)"));
  }
  state->error = s;
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
