// GRU (Keras 3's keras.layers.GRU with its GRUCell): for each step t of
// [batch, timesteps, features] inputs, from h = 0, with x = x_t @ kernel +
// input bias and, with reset_after (the default), i = h @ recurrent_kernel
// + recurrent bias (gates z, r, h):
//   z = sig(x_z + i_z), r = sig(x_r + i_r), n = act(x_h + r * i_h)
// (reset_after false: n = act(x_h + (r * h) @ recurrent_kernel[:, 2u:]),
// one bias on x), then h = z * h + (1 - z) * n, computed as n + z * (h - n).
// Unrolled as LSTM (models/layers/lstm.cc); the weights live in Keras's
// cell: "layers/gru/cell/vars" in model.weights.h5.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers/recurrent.h"
#include "models/recurrent_layers.h"
#include "models/training.h"
#include "ops/concat_ops.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct GRUConfig : LayerConfig {
  int64_t units = 0;
  GRUOptions options;
};

const GRUConfig& Config(const LayerState& layer) {
  return ConfigOf<GRUConfig>(layer);
}

Json WriteGRUConfig(const LayerState& layer, const std::string& name) {
  const GRUConfig& l = Config(layer);
  Json c = CommonConfig(name);
  WriteRecurrentConfig(FieldsOf(l.options), c);
  c["units"] = l.units;
  c["kernel_initializer"] = InitializerJson("GlorotUniform");
  c["recurrent_initializer"] = KerasObject("keras.initializers", "Orthogonal",
                                           {{"gain", 1.0}, {"seed", nullptr}});
  c["bias_initializer"] = InitializerJson("Zeros");
  c["reset_after"] = l.options.reset_after;
  return c;
}

absl::StatusOr<Layer> ReadGRUConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(const int64_t units, config.Int("units"));
  GRUOptions o;
  RecurrentFields f = FieldsOf(o);
  GG_RETURN_IF_ERROR(ReadRecurrentConfig(config, f));
  SetFields(std::move(f), o);
  GG_ASSIGN_OR_RETURN(o.reset_after, config.Bool("reset_after", true));
  return layers::GRU(units, std::move(o));
}

absl::StatusOr<TensorShape> GRUOutputShape(const LayerState& layer,
                                           const TensorShape& in) {
  const GRUConfig& c = Config(layer);
  return RecurrentOutputShape(layer, in, c.units, c.options.return_sequences);
}

std::vector<WeightSpec> GRUWeights(const LayerState& layer,
                                   const TensorShape& in) {
  const GRUConfig& c = Config(layer);
  const int64_t gates = 3 * c.units;  // the builder bounds units
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
                   .shape = c.options.reset_after ? TensorShape({2, gates})
                                                  : TensorShape({gates})});
  }
  return out;
}

absl::Status CheckGRUWeights(const LayerState& layer, const TensorShape& in) {
  const int64_t units = Config(layer).units;
  const std::string what = absl::StrCat(LayerLabel(layer), " of ", units,
                                        " units on ", in[1], " features, its ");
  GG_RETURN_IF_ERROR(
      CheckFits(DT_FLOAT, {in[1], 3 * units}, 1, what + "kernel"));
  return CheckFits(DT_FLOAT, {units, 3 * units}, 1, what + "recurrent_kernel");
}

absl::StatusOr<LayerOutputs> ApplyGRU(const LayerState& layer,
                                      const BuiltLayer& built, const Output& x,
                                      bool) {
  const GRUConfig& c = Config(layer);
  const GRUOptions& o = c.options;
  const std::string& scope = built.name();
  const int64_t steps = built.shape[0], features = built.shape[1];
  const int64_t u = c.units, gates = 3 * u;
  const Output& kernel = built.variables[0].read;
  const Output& recurrent = built.variables[1].read;
  // The input bias, and with reset_after the recurrent one: rows of bias.
  Output input_bias, recurrent_bias;
  if (o.use_bias && o.reset_after) {
    const Output& bias = built.variables[2].read;
    for (int row = 0; row < 2; ++row) {
      const std::string at = absl::StrCat(scope, "/bias_", row);
      GG_ASSIGN_OR_RETURN(Output b, ops::Slice(bias, {row, 0}, {1, gates},
                                               {.name = at + "/Slice"}));
      GG_ASSIGN_OR_RETURN(b,
                          ops::Reshape(b, {gates}, {.name = at + "/Reshape"}));
      (row == 0 ? input_bias : recurrent_bias) = b;
    }
  } else if (o.use_bias) {
    input_bias = built.variables[2].read;
  }
  GG_ASSIGN_OR_RETURN(
      const Output xz,
      ProjectSteps(x, kernel, o.use_bias ? &input_bias : nullptr, steps,
                   features, gates, scope));
  // Without reset_after the candidate's recurrent columns are applied to
  // r * h apart from the gates'.
  Output gate_kernel = recurrent, candidate_kernel;
  if (!o.reset_after) {
    GG_ASSIGN_OR_RETURN(gate_kernel,
                        ops::Slice(recurrent, {0, 0}, {u, 2 * u},
                                   {.name = scope + "/Slice_recurrent"}));
    GG_ASSIGN_OR_RETURN(candidate_kernel,
                        ops::Slice(recurrent, {0, 2 * u}, {u, u},
                                   {.name = scope + "/Slice_recurrent_1"}));
  }
  const bool with_recurrent_bias = o.use_bias && o.reset_after;
  Output h;
  std::vector<Output> sequence;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = o.go_backwards ? steps - 1 - s : s;
    const std::string at = absl::StrCat(scope, "/step_", s);
    GG_ASSIGN_OR_RETURN(Output zx, StepRows(xz, t, gates, at));
    // h @ recurrent_kernel (+ recurrent bias) [batch, n]; at the first step
    // h is zero, leaving the bias [3u] alone (added and multiplied with
    // broadcasting), or nothing.
    Output inner;
    const bool first = s == 0;
    const bool has_inner = !first || with_recurrent_bias;
    if (!first) {
      GG_ASSIGN_OR_RETURN(
          inner, ops::MatMul(h, gate_kernel, {.name = at + "/MatMul"}));
      if (with_recurrent_bias) {
        GG_ASSIGN_OR_RETURN(inner, ops::BiasAdd(inner, recurrent_bias,
                                                {.name = at + "/BiasAdd"}));
      }
    }
    auto inner_columns =
        [&](int k, const std::string& name) -> absl::StatusOr<Output> {
      if (!first) return Columns(inner, k, u, name);
      return ops::Slice(recurrent_bias, {k * u}, {u}, {.name = name});
    };
    auto gate = [&](int k, const char* g) -> absl::StatusOr<Output> {
      GG_ASSIGN_OR_RETURN(Output a, Columns(zx, k, u, at + "/Slice_x" + g));
      if (has_inner) {
        GG_ASSIGN_OR_RETURN(Output b, inner_columns(k, at + "/Slice_h" + g));
        GG_ASSIGN_OR_RETURN(a, ops::AddV2(a, b, {.name = at + "/add_" + g}));
      }
      return ApplyActivation(o.recurrent_activation, a, at + "/" + g);
    };
    GG_ASSIGN_OR_RETURN(Output z, gate(0, "z"));
    GG_ASSIGN_OR_RETURN(Output xh, Columns(zx, 2, u, at + "/Slice_xh"));
    if (has_inner) {
      GG_ASSIGN_OR_RETURN(Output r, gate(1, "r"));
      Output rh;
      if (o.reset_after) {
        GG_ASSIGN_OR_RETURN(Output ih, inner_columns(2, at + "/Slice_hh"));
        GG_ASSIGN_OR_RETURN(rh, ops::Mul(r, ih, {.name = at + "/mul"}));
      } else {
        GG_ASSIGN_OR_RETURN(Output r_h, ops::Mul(r, h, {.name = at + "/mul"}));
        GG_ASSIGN_OR_RETURN(
            rh, ops::MatMul(r_h, candidate_kernel, {.name = at + "/MatMul_1"}));
      }
      GG_ASSIGN_OR_RETURN(xh, ops::AddV2(xh, rh, {.name = at + "/add_h"}));
    }
    GG_ASSIGN_OR_RETURN(Output n, ApplyActivation(o.activation, xh, at + "/h"));
    // h = n + z * (h - n); with h zero: n - z * n.
    Output next;
    if (s == 0) {
      GG_ASSIGN_OR_RETURN(Output zn, ops::Mul(z, n, {.name = at + "/mul_1"}));
      GG_ASSIGN_OR_RETURN(next, ops::Sub(n, zn, {.name = at + "/sub"}));
    } else {
      GG_ASSIGN_OR_RETURN(Output d, ops::Sub(h, n, {.name = at + "/sub"}));
      GG_ASSIGN_OR_RETURN(Output zd, ops::Mul(z, d, {.name = at + "/mul_1"}));
      GG_ASSIGN_OR_RETURN(next, ops::AddV2(n, zd, {.name = at + "/add"}));
    }
    h = next;
    if (o.return_sequences) sequence.push_back(h);
  }
  return RecurrentOutputs(h, sequence, u, scope);
}

int64_t GRUUnits(const LayerState& layer) { return Config(layer).units; }

const LayerKind& GRUKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "GRU",
      .default_name = "gru",
      .order = 61,
      .weights_group = "gru",
      .weights_subgroup = "cell",
      .fields = {{"units", "int32", ""},
                 {"activation", "activation", "\"tanh\""},
                 {"recurrent_activation", "activation", "\"sigmoid\""},
                 {"use_bias", "bool", "true"},
                 {"dropout", "float", "0.0"},
                 {"recurrent_dropout", "float", "0.0"},
                 {"seed", "seed", "null"},
                 {"return_sequences", "bool", "false"},
                 {"return_state", "bool", "false"},
                 {"go_backwards", "bool", "false"},
                 {"stateful", "bool", "false"},
                 {"unroll", "bool", "false"},
                 {"reset_after", "bool", "true"},
                 {"name", "name", "null"}},
      .write_config = WriteGRUConfig,
      .read_config = ReadGRUConfig,
      .output_shape = GRUOutputShape,
      .weights = GRUWeights,
      .check_weights = CheckGRUWeights,
      .rebuilt_message = RecurrentRebuilt,
      .apply = ApplyGRU,
      .units = GRUUnits,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(GRUKind);
}  // namespace models_internal

namespace layers {

Layer GRU(int64_t units, GRUOptions options) {
  using models_internal::GRUConfig;
  auto config = std::make_unique<GRUConfig>();
  config->units = units;
  config->options = std::move(options);
  const GRUConfig& c = *config;
  auto state = models_internal::NewLayerState(
      models_internal::GRUKind(), c.options.name, std::move(config));
  state->error = models_internal::CheckRecurrent(
      *state, units, models_internal::FieldsOf(c.options));
  return MakeLayer(std::move(state));
}

}  // namespace layers
}  // namespace graphgc
