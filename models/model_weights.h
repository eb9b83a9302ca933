// models/model_weights.h
//
// A model's weights as model.weights.h5 holds them: the bytes Save and
// SaveWeights write (each layer's variables under its Keras group,
// serialize/keras_weights.h) and the values LoadModel reads back for a
// created model, after refusing a file with layers the config lacks.
// Private to models/.
#ifndef GRAPHGC_MODELS_MODEL_WEIGHTS_H_
#define GRAPHGC_MODELS_MODEL_WEIGHTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/layers.h"
#include "models/saving_access.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

// The weights group of each of `layers` ("layers/dense", "layers/dense_1"),
// as Keras 3 names it: the snake-case class name, uniqued per model in
// layer order. Empty for a layer Keras gives no group: a Sequential's
// InputLayer. A Functional's model.layers includes its Input layers, which
// Keras saves as (empty) "layers/input_layer" groups, so `functional`
// gives them one.
std::vector<std::string> WeightsPaths(const std::vector<Layer>& layers,
                                      bool functional);

// The bytes of model.weights.h5 for `snap`, or a status prefixed by `where`:
// Unimplemented for a layer kind without saving support. A compiled
// snapshot's optimizer variables go under "optimizer"
// (models/optimizer_state.h), as Keras's model.save and save_weights write
// them.
absl::StatusOr<std::string> WeightsBytes(const ModelSnapshot& snap,
                                         const std::string& where);

// The weights of `layers` (built, as Sequential::Create leaves them) read
// from `h5` (`file` names it in statuses), in layer order and each layer's
// variables in order: what AssignWeights takes. A file holding a layer
// group no layer of `layers` has is refused before any weight is read, as
// Keras refuses a layer count mismatch; groups outside "layers" (Keras's
// "optimizer") are not looked at.
absl::StatusOr<std::vector<Tensor>> DecodeModelWeights(
    const std::string& h5, const std::vector<Layer>& layers,
    const std::string& file);
// The same with each layer's group given (`paths[i]` for `layers[i]`, as
// WeightsPaths names them; empty: none).
absl::StatusOr<std::vector<Tensor>> DecodeModelWeights(
    const std::string& h5, const std::vector<Layer>& layers,
    const std::vector<std::string>& paths, const std::string& file);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_MODEL_WEIGHTS_H_
