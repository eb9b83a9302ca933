// models/recurrent_layers.h
//
// Keras 3's recurrent layers: LSTM and GRU (and their options), registered
// by models/layers/lstm.cc and gru.cc and usable in Sequential and Functional
// models as the layers of layers.h. Inputs are [batch, timesteps, features]
// with a known number of timesteps: the layer is unrolled over them in the
// graph (one MatMul of every step's inputs by the kernel, then one MatMul of
// the state by the recurrent kernel per step), from a zero initial state. Bad
// arguments are reported by Sequential::Create (InvalidArgument naming the
// layer and the argument).
//
// Thread safety: as layers.h.
#ifndef GRAPHGC_MODELS_RECURRENT_LAYERS_H_
#define GRAPHGC_MODELS_RECURRENT_LAYERS_H_

#include <cstdint>
#include <string>

#include "models/layers.h"

namespace graphgc {

// Keras's LSTM options. Not implemented (refused naming the argument):
// return_state (a layer call has one output), dropout and
// recurrent_dropout other than 0, stateful.
struct LSTMOptions {
  std::string activation = "tanh";  // of the cell input and the state
  std::string recurrent_activation = "sigmoid";  // of the gates
  bool use_bias = true;
  bool unit_forget_bias = true;   // the forget gate's bias starts at 1
  bool return_sequences = false;  // every step's output, not the last
  bool return_state = false;      // refused
  bool go_backwards = false;      // the steps in reverse order
  float dropout = 0.f;            // 0 only
  float recurrent_dropout = 0.f;  // 0 only
  std::string name;               // empty: "lstm", uniqued in the graph
  uint64_t seed = 0;  // the kernels' initialisers' seed; 0: a fresh one
};

// Keras's GRU options, refusing what LSTMOptions refuses.
struct GRUOptions {
  std::string activation = "tanh";               // of the candidate state
  std::string recurrent_activation = "sigmoid";  // of the gates
  bool use_bias = true;
  // The reset gate applied after the recurrent MatMul, with separate input
  // and recurrent biases (bias [2, 3 * units]); false: before it (bias
  // [3 * units]).
  bool reset_after = true;
  bool return_sequences = false;
  bool return_state = false;  // refused
  bool go_backwards = false;
  float dropout = 0.f;            // 0 only
  float recurrent_dropout = 0.f;  // 0 only
  std::string name;               // empty: "gru", uniqued in the graph
  uint64_t seed = 0;
};

namespace layers {

// Keras's keras.layers.LSTM(units): kernel [features, 4 * units]
// glorot_uniform, recurrent_kernel [units, 4 * units] orthogonal, bias
// [4 * units] zeros (ones for the forget gate with unit_forget_bias), the
// gates in Keras's order i, f, c, o. Output [batch, units], or [batch,
// timesteps, units] with return_sequences.
Layer LSTM(int64_t units, LSTMOptions options = {});

// Keras's keras.layers.GRU(units): kernel [features, 3 * units]
// glorot_uniform, recurrent_kernel [units, 3 * units] orthogonal, bias
// zeros, the gates in Keras's order z (update), r (reset), h; each step
// h = z * h + (1 - z) * candidate. Output as LSTM's.
Layer GRU(int64_t units, GRUOptions options = {});

}  // namespace layers
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_RECURRENT_LAYERS_H_
