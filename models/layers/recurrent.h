// models/layers/recurrent.h
//
// What the recurrent kinds (lstm.cc, gru.cc) share: Keras's RNN base
// config fields, the checks of what graphgc does not implement, the output
// shape on [batch, timesteps, features] inputs, and the pieces of the
// unrolled loop (every step's inputs through the kernel at once, one step's
// rows, the returned tensor).
//
// Thread safety: as the layer registry's kinds.
#ifndef GRAPHGC_MODELS_LAYERS_RECURRENT_H_
#define GRAPHGC_MODELS_LAYERS_RECURRENT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/keras_json.h"
#include "models/layer_registry.h"
#include "ops/ops.h"

namespace graphgc {
namespace models_internal {

// The options every recurrent kind reads the same way.
struct RecurrentFields {
  std::string activation;
  std::string recurrent_activation;
  bool use_bias = true;
  bool return_sequences = false;
  bool return_state = false;
  bool go_backwards = false;
  float dropout = 0.f;
  float recurrent_dropout = 0.f;
  std::string name;
  uint64_t seed = 0;
};

// The shared fields of an LSTMOptions or GRUOptions `o`.
template <typename Options>
RecurrentFields FieldsOf(const Options& o) {
  return {.activation = o.activation,
          .recurrent_activation = o.recurrent_activation,
          .use_bias = o.use_bias,
          .return_sequences = o.return_sequences,
          .return_state = o.return_state,
          .go_backwards = o.go_backwards,
          .dropout = o.dropout,
          .recurrent_dropout = o.recurrent_dropout,
          .name = o.name,
          .seed = o.seed};
}

// `f` into the shared fields of `o`.
template <typename Options>
void SetFields(RecurrentFields f, Options& o) {
  o.activation = std::move(f.activation);
  o.recurrent_activation = std::move(f.recurrent_activation);
  o.use_bias = f.use_bias;
  o.return_sequences = f.return_sequences;
  o.return_state = f.return_state;
  o.go_backwards = f.go_backwards;
  o.dropout = f.dropout;
  o.recurrent_dropout = f.recurrent_dropout;
  o.name = std::move(f.name);
  o.seed = f.seed;
}

// Keras's RNN base fields and the cell's shared ones of `f` into `c`:
// return_sequences ... zero_output_for_mask, activation, use_bias,
// regularizers and constraints (null), dropout, recurrent_dropout, seed.
void WriteRecurrentConfig(const RecurrentFields& f, Json& c);

// The shared fields of a config (an activation absent is the kind's
// default in `f`, null is Keras's None: linear); refuses stateful=True,
// regularizers and constraints.
absl::Status ReadRecurrentConfig(const ConfigObject& config,
                                 RecurrentFields& f);

// The status a builder stores: InvalidArgument for units outside [1, 2^40]
// or an unknown activation, Unimplemented for return_state=True, dropout or
// recurrent_dropout other than 0; each naming the layer and the argument.
absl::Status CheckRecurrent(const LayerState& layer, int64_t units,
                            const RecurrentFields& f);

// [units], or [timesteps, units] with return_sequences, on per-sample `in`
// [timesteps, features] with both known; InvalidArgument naming the layer.
absl::StatusOr<TensorShape> RecurrentOutputShape(const LayerState& layer,
                                                 const TensorShape& in,
                                                 int64_t units,
                                                 bool return_sequences);

std::string RecurrentRebuilt(const std::string& name, const TensorShape& built,
                             const TensorShape& in);

// A second initialiser's seed from `seed` (0 stays 0: a fresh seed).
uint64_t NextSeed(uint64_t seed);

// x [batch, steps, features] @ kernel [features, width] (+ bias [width]
// when given), as [batch, steps, width]: nodes "<scope>/Reshape", "/MatMul",
// "/BiasAdd", "/Reshape_1".
absl::StatusOr<Output> ProjectSteps(const Output& x, const Output& kernel,
                                    const Output* bias, int64_t steps,
                                    int64_t features, int64_t width,
                                    const std::string& scope);

// The rows [batch, width] of step `t` of a projection: "<at>/Slice",
// "<at>/Reshape".
absl::StatusOr<Output> StepRows(const Output& projected, int64_t t,
                                int64_t width, const std::string& at);

// Columns [k * width, (k + 1) * width) of z [batch, n]: "<name>".
absl::StatusOr<Output> Columns(const Output& z, int64_t k, int64_t width,
                               const std::string& name);

// The layer's output: the last state `h`, or with `sequence` (each step's
// h [batch, units] in the order the steps ran) non-empty their stack
// [batch, steps, units], as Keras returns it.
absl::StatusOr<LayerOutputs> RecurrentOutputs(
    const Output& h, const std::vector<Output>& sequence, int64_t units,
    const std::string& scope);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LAYERS_RECURRENT_H_
