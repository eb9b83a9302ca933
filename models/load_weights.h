// models/load_weights.h
//
// LoadWeights: a model's weights set from a `.weights.h5` file, what Keras
// 3's `model.load_weights("w.weights.h5")` does; the reverse of SaveWeights
// (models/saving.h). The file is Keras 3's layout (serialize/keras_weights.h):
// "layers/<group>/vars/<i>", each layer's group named as Keras names it
// (snake-case class name, uniqued in layer order), so a file Keras wrote for
// the same architecture loads, and ours loads in Keras.
//
// All or nothing: the file is read, every layer's group checked (a group
// the model has no layer for is Keras's "Layer count mismatch"; a layer
// whose variable count or shapes differ is InvalidArgument naming the layer,
// its Keras group and the dataset), and every weight decoded before any
// variable is set; a failed load leaves every weight as it was.
//
// Untrusted input, bounded before anything is allocated for it:
//   - the file must be a regular file (util/file.h); it is read into memory
//     at most up to the model's float32 weights W times 4 (the weights and
//     up to three optimizer slots a Keras file may carry: AMSGrad's m, v and
//     vhat), plus 1 MiB and 64 KiB per layer of HDF5 metadata, and at most
//     what `max_bytes` leaves once the weights are held twice; a larger file
//     is ResourceExhausted naming it and the bound, before it is read;
//   - a model whose load needs more than `max_bytes` (4 W: the weights read,
//     the variables, the file and HDF5's copy of it) is ResourceExhausted
//     before the file is opened; <= 0: no budget of its own;
//   - HDF5 is read from memory through serialize/keras_weights.h's
//     read-only driver, which refuses links other than hard links,
//     external storage, virtual datasets and filters other than shuffle and
//     Fletcher-32, and bounds its own working memory.
// Groups outside "layers" (Keras's "optimizer", "vars") are ignored.
//
// Thread safety: as SetWeights (models/sequential.h): calls on one model
// are serialised by the model; the weights are set all at once.
//
// Example:
//   GG_RETURN_IF_ERROR(SaveWeights(model, "/tmp/w.weights.h5"));
//   GG_RETURN_IF_ERROR(LoadWeights(other, "/tmp/w.weights.h5"));
#ifndef GRAPHGC_MODELS_LOAD_WEIGHTS_H_
#define GRAPHGC_MODELS_LOAD_WEIGHTS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/functional.h"
#include "models/saving_types.h"
#include "models/sequential.h"

namespace graphgc {

// Sets `model`'s weights from the weights file `path` (see above). An
// empty path or one with a NUL byte is InvalidArgument; NotFound for a
// missing file; DataLoss for bytes that are not a valid HDF5 file; other
// errors name `path` and the layer.
absl::Status LoadWeights(Sequential& model, const std::string& path,
                         int64_t max_bytes = kDefaultLoadBudget);
absl::Status LoadWeights(Functional& model, const std::string& path,
                         int64_t max_bytes = kDefaultLoadBudget);

// The largest weights file LoadWeights(model, path, max_bytes) reads (the
// bound above), for a caller that stages the file first (the `.keras`
// reader bounds the zip entry it extracts by it); ResourceExhausted naming
// the model when its load needs more than `max_bytes`.
absl::StatusOr<int64_t> MaxWeightsFileBytes(
    const Sequential& model, int64_t max_bytes = kDefaultLoadBudget);
absl::StatusOr<int64_t> MaxWeightsFileBytes(
    const Functional& model, int64_t max_bytes = kDefaultLoadBudget);

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LOAD_WEIGHTS_H_
