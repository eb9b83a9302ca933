// models/functional.h
//
// The functional API, as Keras's: symbolic values (KerasTensor) made by
// Input() and by calling layers on them, and Functional, a model from its
// input values to its output values through any graph of layer calls
// (branches, merges, a layer called more than once):
//
//   KerasTensor x = Input({8});
//   Layer dense = layers::Dense(8, {.activation = "relu"});
//   KerasTensor h = dense(x);
//   KerasTensor y = layers::Add()({h, x});        // a residual connection
//   Functional model = Functional::Create({x}, {layers::Dense(1)(y)}).value();
//
// A KerasTensor is one value of one layer call: the layer, the values it
// read and its per-sample shape. Calling a layer builds nothing: the call's
// shape is checked at once, and a refused call (bad options, a shape the
// layer cannot take, a merge layer not given a list) makes a KerasTensor
// holding the error, which every later call on it carries and
// Functional::Create reports, as Sequential::Create reports bad layer
// options. A layer called twice is one layer with one set of weights.
//
// Functional::Create orders the calls the outputs reach (the inputs first),
// builds them with the training engine (models/engine.h) and gives the same
// Compile, Fit, Evaluate, Predict, GetWeights and SetWeights as Sequential,
// with the same ownership, collection and thread-safety rules
// (models/sequential.h): dropping the last copy of a model orphans the nodes
// only it reached; layers shared with a live model keep their variables.
// The KerasTensors hold their layers (and so their variables) while they
// live, as the model does.
//
// A model may have several inputs and outputs (Keras's multi-input,
// multi-output models): the list forms of Fit, Evaluate and Predict take one
// tensor per input (x) and per output (y), each with one row per sample;
// Compile's `losses`, `loss_weights` and `output_metrics` set each output's
// loss (none: the output is not trained on), weight and metrics; the total
// loss is the weighted sum, and the logs are named as Keras 3's ("loss",
// "<output>_loss", "<output>_accuracy", "val_...").
//
// Saving: Save writes Keras 3's functional config and weights layout
// (models/saving.h); LoadFunctional and LoadAnyModel read them back.
//
// Callbacks: a callback's OnTrainBegin gets a Sequential handle on the
// same model (the engine's handle; models/callbacks/callback.h). Every
// method of it works on the functional model as such: Save, SaveWeights
// and ModelToJson through it write the Functional config and layout, so
// ModelCheckpoint and TensorBoard's write_graph work unchanged.
//
// Not implemented yet: saving a model of several inputs or outputs (Save
// returns Unimplemented; its GraphDef signature has one input and one
// output).
#ifndef GRAPHGC_MODELS_FUNCTIONAL_H_
#define GRAPHGC_MODELS_FUNCTIONAL_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gc/handle.h"
#include "models/layers.h"
#include "models/model_options.h"
#include "models/sequential.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {

namespace models_internal {
struct ModelState;
struct SavingAccess;
struct SymbolicAccess;
struct SymbolicCall;
}  // namespace models_internal

class KerasTensor {
 public:
  // Empty: a call on it is refused.
  KerasTensor() = default;

  // The per-sample shape (without the batch dimension); [] when the call
  // that made it was refused.
  const TensorShape& shape() const;
  // The layer whose call made it (an InputLayer for Input()).
  Layer layer() const;
  // OK, or why the call that made it, or one it depends on, was refused.
  absl::Status status() const;

 private:
  friend struct models_internal::SymbolicAccess;  // models/functional.cc
  explicit KerasTensor(std::shared_ptr<const models_internal::SymbolicCall> c)
      : call_(std::move(c)) {}
  std::shared_ptr<const models_internal::SymbolicCall> call_;
};

// Keras's keras.Input: a model's input of per-sample `shape` (an InputLayer
// named `name`, or "input_layer" uniqued when built).
KerasTensor Input(TensorShape shape, std::string name = "");

struct FunctionalOptions {
  std::string name;          // empty: "functional", uniqued in the graph
  Graph* graph = nullptr;    // nullptr: Graph::Default()
  int intra_op_threads = 0;  // as SequentialOptions's: 0 the process's count
};

class Functional {
 public:
  // Every value of `inputs` is an Input(); `outputs` are values reached
  // from them. A refused call among the values, an output that depends on
  // an Input not listed, or a layer of another graph or built for other
  // shapes is InvalidArgument.
  static absl::StatusOr<Functional> Create(std::vector<KerasTensor> inputs,
                                           std::vector<KerasTensor> outputs,
                                           FunctionalOptions options = {});

  // As Sequential's (models/sequential.h).
  absl::Status Compile(CompileOptions options);
  absl::StatusOr<History> Fit(const Tensor& x, const Tensor& y,
                              FitOptions options = {});
  absl::StatusOr<std::map<std::string, float>> Evaluate(const Tensor& x,
                                                        const Tensor& y,
                                                        int batch_size = 32,
                                                        int verbose = 0);
  absl::StatusOr<std::map<std::string, float>> Evaluate(
      const Tensor& x, const Tensor& y, const Tensor& sample_weight,
      int batch_size = 32, int verbose = 0);
  absl::StatusOr<Tensor> Predict(const Tensor& x, int batch_size = 32,
                                 int verbose = 0);
  // The list forms, for any model: one x per input, in the order of
  // inputs(), and one y per output (or one per output with a loss), in the
  // order of outputs(); every tensor's first dimension is the sample count.
  // FitOptions::validation_lists gives validation data in this form.
  // Predict returns one tensor per output.
  absl::StatusOr<History> Fit(std::vector<Tensor> x, std::vector<Tensor> y,
                              FitOptions options = {});
  absl::StatusOr<std::map<std::string, float>> Evaluate(std::vector<Tensor> x,
                                                        std::vector<Tensor> y,
                                                        int batch_size = 32,
                                                        int verbose = 0);
  absl::StatusOr<std::map<std::string, float>> Evaluate(
      std::vector<Tensor> x, std::vector<Tensor> y, const Tensor& sample_weight,
      int batch_size = 32, int verbose = 0);
  absl::StatusOr<std::vector<Tensor>> Predict(std::vector<Tensor> x,
                                              int batch_size = 32,
                                              int verbose = 0);
  // Each layer's weights once, in the order of layers().
  std::vector<Tensor> GetWeights() const;
  absl::Status SetWeights(const std::vector<Tensor>& weights);

  // Keras's functional summary table (98 columns): one row per layer, the
  // Input layers included, with its output shape, parameter count and the
  // values it reads ("Connected to": "dense[0][0]", the layer's name, its
  // call in this model and the value's index), then the parameter totals,
  // each shared weight counted once. "" when moved from.
  std::string Summary() const;

  // As Sequential's: the compiled optimizer's learning rate and step count,
  // and Keras's `model.stop_training = True`.
  absl::StatusOr<float> learning_rate() const {
    return Engine().learning_rate();
  }
  absl::Status SetLearningRate(float learning_rate) {
    return Engine().SetLearningRate(learning_rate);
  }
  absl::StatusOr<int64_t> iterations() const { return Engine().iterations(); }
  void StopTraining() { Engine().StopTraining(); }
  bool stop_training() const { return Engine().stop_training(); }

  // As Sequential's, in Keras 3's Functional format (models/saving.h).
  absl::Status Save(const std::string& dir) const;

  const std::string& name() const;
  // Each layer once, in the order of its first call, Input layers included
  // (Keras's model.layers).
  const std::vector<Layer>& layers() const;
  const std::vector<KerasTensor>& inputs() const { return inputs_; }
  const std::vector<KerasTensor>& outputs() const { return outputs_; }
  // Keras's model.input_names / output_names: each input's and output's
  // layer name, in order (empty when moved from).
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  bool compiled() const;
  std::vector<NodeHandle> GraphRoots() const;

 private:
  friend struct models_internal::SavingAccess;  // models/saving_access.h
  Functional(std::shared_ptr<models_internal::ModelState> state,
             std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs);
  // The engine's methods through a Sequential handle on the same state.
  Sequential Engine() const { return Sequential(state_); }

  std::shared_ptr<models_internal::ModelState> state_;
  std::vector<KerasTensor> inputs_;
  std::vector<KerasTensor> outputs_;
};

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_FUNCTIONAL_H_
