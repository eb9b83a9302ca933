// models/sequential.h
//
// Sequential: a Keras-style stack of layers on a graph (the default graph
// unless told otherwise), as a copyable handle: a copy is the same model.
//
// Create() validates the stack and builds the layers it uses for the first
// time plus the model's forward nodes. Compile() builds, once, the training
// step as graph nodes: the loss, the metrics, the gradients and the
// optimizer's updates (under the model's name scope, "sequential_3/...").
// Fit() runs that step through the model's session, batch by batch, calling
// the graph's MaybeCollect() before each step.
//
// Ownership: the model holds its nodes with handles labelled
// "Sequential '<name>'"; its layers hold their variables. Dropping the last
// copy of a model orphans everything only it reached (the next collection
// sweeps it); layers shared with other models keep their variables.
//
// Bad input gets a status saying what and where, and leaves the model and
// its weights exactly as they were.
//
// Thread safety: different models may be used from different threads at
// once; calls on one model are serialised by the model.
#ifndef GRAPHGC_MODELS_SEQUENTIAL_H_
#define GRAPHGC_MODELS_SEQUENTIAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gc/handle.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {

struct SequentialOptions {
  std::string name;        // empty: "sequential", uniqued in the graph
  Graph* graph = nullptr;  // nullptr: Graph::Default()
  int intra_op_threads = 1;
};

struct CompileOptions {
  Optimizer optimizer;
  Loss loss;
  std::vector<std::string> metrics;  // "accuracy" (or "acc")
};

struct FitOptions {
  int epochs = 1;
  int batch_size = 32;
  bool shuffle = true;
  int verbose = 1;  // 0 silent, 1 progress bar, 2 one line per epoch
  std::vector<std::shared_ptr<Callback>> callbacks;
  std::optional<std::pair<Tensor, Tensor>> validation_data;
  uint64_t seed = 0;
};

// Per-epoch values of a fit: history["loss"][epoch], "accuracy",
// "val_loss", "val_accuracy".
struct History {
  std::map<std::string, std::vector<float>> history;
  std::vector<int> epoch;

  // The values of one key (empty when absent).
  const std::vector<float>& values(const std::string& key) const;
};

namespace models_internal {
struct ModelState;
}  // namespace models_internal

class Sequential {
 public:
  static absl::StatusOr<Sequential> Create(std::vector<Layer> layers,
                                           SequentialOptions options = {});

  absl::Status Compile(CompileOptions options);
  absl::StatusOr<History> Fit(const Tensor& x, const Tensor& y,
                              FitOptions options = {});
  // Loss and metrics over (x, y), weighted by batch size.
  absl::StatusOr<std::map<std::string, float>> Evaluate(const Tensor& x,
                                                        const Tensor& y,
                                                        int batch_size = 32);
  absl::StatusOr<Tensor> Predict(const Tensor& x, int batch_size = 32);

  // Kernel and bias of each Dense layer, in layer order.
  std::vector<Tensor> GetWeights() const;
  absl::Status SetWeights(const std::vector<Tensor>& weights);

  const std::string& name() const;
  Graph& graph() const;
  const std::vector<Layer>& layers() const;
  bool compiled() const;

  // The nodes that stand for the whole model (training step, loss,
  // metrics, predictions, inputs): everything the model reaches is
  // reachable from them. Exports and the TensorBoard callback use these.
  std::vector<NodeHandle> GraphRoots() const;

 private:
  explicit Sequential(std::shared_ptr<models_internal::ModelState> state)
      : state_(std::move(state)) {}
  std::shared_ptr<models_internal::ModelState> state_;
};

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SEQUENTIAL_H_
