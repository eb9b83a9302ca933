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
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/layers.h"
#include "models/saving_access.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

// The bytes of model.weights.h5 for `snap`, or a status prefixed by `where`:
// Unimplemented for a layer kind without saving support.
absl::StatusOr<std::string> WeightsBytes(const ModelSnapshot& snap,
                                         const std::string& where);

// Refuses a weights file holding a layer group no layer of `layers` has,
// as Keras refuses a layer count mismatch. Groups outside "layers"
// (Keras's "optimizer") are not looked at.
absl::Status CheckSavedLayers(std::string_view h5,
                              const std::vector<Layer>& layers,
                              const std::string& file);

// The weights of `layers` (built, as Sequential::Create leaves them) read
// from `h5` (`file` names it in statuses), in layer order and each layer's
// variables in order: what AssignWeights takes.
absl::StatusOr<std::vector<Tensor>> DecodeModelWeights(
    const std::string& h5, const std::vector<Layer>& layers,
    const std::string& file);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_MODEL_WEIGHTS_H_
