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
#include "models/layers/recurrent.h"
#include "models/recurrent_layers.h"
#include "models/training.h"
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
  Json c = CommonConfig(name);
  WriteRecurrentConfig(FieldsOf(l.options), c);
  c["units"] = l.units;
  c["kernel_initializer"] = InitializerJson("GlorotUniform");
  c["recurrent_initializer"] = KerasObject("keras.initializers", "Orthogonal",
                                           {{"gain", 1.0}, {"seed", nullptr}});
  c["bias_initializer"] = InitializerJson("Zeros");
  c["unit_forget_bias"] = l.options.unit_forget_bias;
  return c;
}

absl::StatusOr<Layer> ReadLSTMConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(const int64_t units, config.Int("units"));
  LSTMOptions o;
  RecurrentFields f = FieldsOf(o);
  GG_RETURN_IF_ERROR(ReadRecurrentConfig(config, f));
  SetFields(std::move(f), o);
  GG_ASSIGN_OR_RETURN(o.unit_forget_bias,
                      config.Bool("unit_forget_bias", true));
  return layers::LSTM(units, std::move(o));
}

absl::StatusOr<TensorShape> LSTMOutputShape(const LayerState& layer,
                                            const TensorShape& in) {
  const LSTMConfig& c = Config(layer);
  return RecurrentOutputShape(layer, in, c.units, c.options.return_sequences);
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
  GG_ASSIGN_OR_RETURN(
      const Output xz,
      ProjectSteps(x, kernel, o.use_bias ? &built.variables[2].read : nullptr,
                   steps, features, gates, scope));
  Output h, cell;
  std::vector<Output> sequence;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = o.go_backwards ? steps - 1 - s : s;
    const std::string at = absl::StrCat(scope, "/step_", s);
    GG_ASSIGN_OR_RETURN(Output z, StepRows(xz, t, gates, at));
    if (s > 0) {
      GG_ASSIGN_OR_RETURN(Output hz,
                          ops::MatMul(h, recurrent, {.name = at + "/MatMul"}));
      GG_ASSIGN_OR_RETURN(z, ops::AddV2(z, hz, {.name = at + "/add"}));
    }
    auto gate = [&](int k, const std::string& act,
                    const char* g) -> absl::StatusOr<Output> {
      GG_ASSIGN_OR_RETURN(Output zk, Columns(z, k, u, at + "/Slice_" + g));
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
    if (o.return_sequences) sequence.push_back(h);
  }
  return RecurrentOutputs(h, sequence, u, scope);
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
      .rebuilt_message = RecurrentRebuilt,
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
  state->error = models_internal::CheckRecurrent(
      *state, units, models_internal::FieldsOf(c.options));
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
